package serve

import "github.com/brisvox/brisvox/messages"

// Event is a call's live event as the page receives it over the signaling
// websocket: {"type":"event","kind":"bot_word","epoch":3,"text":"Hello"}.
//
//	kind           fields
//	state          state: listening, thinking, speaking, ended
//	user_speaking  (the caller started speaking)
//	user_turn      epoch, text: what the caller said
//	bot_word       epoch, text: a word of the answer, as it starts playing
//	bot_done       epoch, cut: the answer ended (cut by a barge-in)
//	latency        epoch, latency_ms: end of speech to first audio out
//	tool           epoch, text: the tool's name (never its arguments)
type Event struct {
	Type      string  `json:"type"`
	Kind      string  `json:"kind"`
	Epoch     uint64  `json:"epoch,omitempty"`
	Text      string  `json:"text,omitempty"`
	State     string  `json:"state,omitempty"`
	Cut       bool    `json:"cut,omitempty"`
	LatencyMS float64 `json:"latency_ms,omitempty"`
}

// EventOf encodes a session's live event for the page.
func EventOf(e messages.CallEvent) Event {
	out := Event{Type: "event", Kind: e.Kind.String(), Epoch: uint64(e.Epoch), Text: e.Text, State: e.State, Cut: e.Cut}
	if e.Kind == messages.EventLatency {
		out.LatencyMS = float64(e.Latency.Microseconds()) / 1000
	}
	return out
}
