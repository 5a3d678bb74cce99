package messages

// Epoch numbers the bot's turns. The turn actor starts a new epoch when a
// user turn ends or when the caller barges in; every message of the output
// side (LLM, tools, TTS, pacer, transport out) carries the epoch it belongs
// to, and an actor drops anything older than the newest epoch it has seen.
// Zero is "no epoch yet".
type Epoch uint64

// CallID names one call. It is opaque and never contains a phone number.
type CallID string

// Stage names one stage of a call's tree, as used by operators (Restart,
// Describe) and by the session's supervision.
type Stage string

// The stages of a call, one per child of the session.
const (
	StageTransport Stage = "transport"
	StageVAD       Stage = "vad"
	StageSTT       Stage = "stt"
	StageTurn      Stage = "turn"
	StageLLM       Stage = "llm"
	StageTools     Stage = "tools"
	StageTTS       Stage = "tts"
	StagePacer     Stage = "pacer"
)

// Stages lists every stage in spawn order (the order of the data path).
func Stages() []Stage {
	return []Stage{StageTransport, StageVAD, StageSTT, StageTurn, StageLLM, StageTools, StageTTS, StagePacer}
}
