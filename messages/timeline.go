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
	// MarkToolsDone: the first round of tool calls of the turn was
	// answered (after the first token, before the answer's audio). Last
	// in the list, so adding it moved no kind's number.
	MarkToolsDone
	// MarkVADDetected: when the VAD decided the stop of MarkVADStop (the
	// audio time of the end of the frame or model window whose score made
	// the decision: MarkVADStop plus the hangover, to the frame or window).
	// Load tests measure the engine's own share of a turn from it; it is
	// not a stage boundary of TurnStages.
	MarkVADDetected
)

var markNames = [...]string{"", "vad_stop", "stt_final", "turn_end", "llm_request", "llm_first_token", "tts_first_audio", "first_audio_out", "interrupt", "tools_done", "vad_detected"}

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

// TurnStage is the share of a turn's latency one stage took.
type TurnStage struct {
	// Name is the stage: listen (the end of speech to the recognizer's
	// final: the VAD's hangover and the final decode), end_of_turn (the
	// final to the turn's end: the end-of-turn wait), think (the turn's end
	// to the model's first token), tools (the first token to the first
	// tool round's answer), voice (to the first synthesised audio: for a
	// tool turn this holds the next round's first token too) and send (to
	// the first audio out).
	Name string
	D    time.Duration
}

// turnStages are the stages of TurnStages, each ending at its mark.
var turnStages = [...]struct {
	name string
	end  MarkKind
}{
	{"listen", MarkSTTFinal},
	{"end_of_turn", MarkTurnEnd},
	{"think", MarkLLMFirstToken},
	{"tools", MarkToolsDone},
	{"voice", MarkTTSFirstAudio},
	{"send", MarkFirstAudioOut},
}

// TurnStages splits a turn's latency, from MarkVADStop to
// MarkFirstAudioOut, by stage, in turn order. A stage whose mark is
// missing is left out and its time goes to the next one; a mark out of
// order (a speculative turn's first token before its end) gives its stage
// no time. The durations sum to the latency exactly. Nil when the turn has
// no VAD stop or no first audio out, or they are out of order.
func TurnStages(marks map[MarkKind]time.Time) []TurnStage {
	start, ok := marks[MarkVADStop]
	end, ok2 := marks[MarkFirstAudioOut]
	if !ok || !ok2 || end.Before(start) {
		return nil
	}
	out := make([]TurnStage, 0, len(turnStages))
	prev := start
	for _, s := range turnStages {
		at, ok := marks[s.end]
		if !ok {
			continue
		}
		if at.Before(prev) {
			at = prev
		}
		if at.After(end) || s.end == MarkFirstAudioOut {
			at = end
		}
		out = append(out, TurnStage{Name: s.name, D: at.Sub(prev)})
		prev = at
	}
	return out
}
