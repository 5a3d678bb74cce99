package serve

import (
	"time"

	"github.com/brisvox/brisvox/messages"
)

// Event is a call's live event as the page receives it over the signaling
// websocket: {"type":"event","kind":"bot_word","epoch":3,"text":"Hello"}.
//
//	kind           fields
//	state          state: listening, thinking, speaking, ended
//	user_speaking  (the caller started speaking)
//	user_turn      epoch, text: what the caller said
//	bot_word       epoch, text: a word of the answer, as it starts playing
//	bot_done       epoch, cut: the answer ended (cut by a barge-in)
//	latency        epoch, latency_ms: end of speech to first audio out;
//	               stages: [{name, ms}] in turn order, summing to latency_ms
//	               (listen, end_of_turn, think, tools, voice, send: see
//	               messages.TurnStage)
//	tool           epoch, call, text: the tool the line is about (never
//	               its arguments), outcome: running, held, done, refused,
//	               cancelled, failed; detail: a few words (a booking's
//	               reference, why it was refused)
type Event struct {
	Type      string  `json:"type"`
	Kind      string  `json:"kind"`
	Epoch     uint64  `json:"epoch,omitempty"`
	Text      string  `json:"text,omitempty"`
	State     string  `json:"state,omitempty"`
	Cut       bool    `json:"cut,omitempty"`
	LatencyMS float64 `json:"latency_ms,omitempty"`
	Stages    []Stage `json:"stages,omitempty"`
	Call      string  `json:"call,omitempty"`
	Outcome   string  `json:"outcome,omitempty"`
	Detail    string  `json:"detail,omitempty"`
}

// Stage is one stage's share of a turn's latency.
type Stage struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

// forPage tells the kinds of live events the caller's page gets; the
// others (restarts, provider usage, LLM rounds, failovers) are for
// operators and the call record.
func forPage(k messages.EventKind) bool {
	switch k {
	case messages.EventState, messages.EventUserSpeaking, messages.EventUserTurn, messages.EventBotWord,
		messages.EventBotDone, messages.EventLatency, messages.EventTool:
		return true
	}
	return false
}

// EventOf encodes a session's live event for the page.
func EventOf(e messages.CallEvent) Event {
	out := Event{Type: "event", Kind: e.Kind.String(), Epoch: uint64(e.Epoch), Text: e.Text, State: e.State, Cut: e.Cut}
	switch e.Kind {
	case messages.EventLatency:
		out.LatencyMS = ms(e.Latency.Microseconds())
		if len(e.Stages) > 0 {
			// Each stage is the step of the running sum in whole
			// microseconds, as the total is: they sum to it exactly.
			out.Stages = make([]Stage, len(e.Stages))
			var cum time.Duration
			for i, s := range e.Stages {
				before := cum.Microseconds()
				cum += s.D
				out.Stages[i] = Stage{Name: s.Name, MS: ms(cum.Microseconds() - before)}
			}
		}
	case messages.EventTool:
		if e.Subject != "" {
			out.Text = e.Subject
		}
		out.Call, out.Outcome, out.Detail = e.Call, e.Outcome, e.Detail
	}
	return out
}

func ms(us int64) float64 { return float64(us) / 1000 }
