package messages

import "time"

// MarkKind names a point of a turn's timeline.
type MarkKind int

// The points of a turn's timeline, in the order they normally happen.
const (
	MarkVADStop MarkKind = iota + 1
	MarkSTTFinal
	MarkTurnEnd
	MarkLLMRequest
	MarkLLMFirstToken
	MarkTTSFirstAudio
	MarkFirstAudioOut
	MarkInterrupt
)

var markNames = [...]string{"", "vad_stop", "stt_final", "turn_end", "llm_request", "llm_first_token", "tts_first_audio", "first_audio_out", "interrupt"}

func (k MarkKind) String() string {
	if int(k) < len(markNames) {
		return markNames[k]
	}
	return "unknown"
}

// TurnMark records a point of Epoch's timeline; the session keeps them. The
// first mark of a kind wins (later rounds of a tool loop do not move the LLM
// marks of the turn).
type TurnMark struct {
	Epoch Epoch
	Kind  MarkKind
	At    time.Time
}
