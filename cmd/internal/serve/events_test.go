package serve

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// TestEventOfStages: the page's latency bar adds the stages up to the
// total. Mutation seen failing: each stage rounded on its own
// (s.D.Microseconds()) -> the 0.4 µs remainders leave the sum 1 µs short.
func TestEventOfStages(t *testing.T) {
	e := messages.CallEvent{Kind: messages.EventLatency, Epoch: 2, Latency: 1200*time.Microsecond + 1200*time.Nanosecond,
		Stages: []messages.TurnStage{
			{Name: "listen", D: 400*time.Microsecond + 400*time.Nanosecond},
			{Name: "think", D: 400*time.Microsecond + 400*time.Nanosecond},
			{Name: "send", D: 400*time.Microsecond + 400*time.Nanosecond},
		}}
	got := EventOf(e)
	var sum float64
	for _, s := range got.Stages {
		sum += s.MS
	}
	if len(got.Stages) != 3 || got.Stages[0].Name != "listen" || got.LatencyMS != 1.201 || sum != got.LatencyMS {
		t.Fatalf("stages %+v (sum %v), latency %v", got.Stages, sum, got.LatencyMS)
	}
}

// TestEventOfTool: a tool line names the tool it is about, with its outcome
// and detail, never the arguments (the event has none to give).
func TestEventOfTool(t *testing.T) {
	cases := []struct {
		name string
		in   messages.CallEvent
		want string
	}{
		{"held", messages.CallEvent{Kind: messages.EventTool, Epoch: 3, Text: "book_table", Call: "t3.0", Outcome: messages.CallHeld, Detail: "waiting for your yes"},
			`{"type":"event","kind":"tool","epoch":3,"text":"book_table","call":"t3.0","outcome":"held","detail":"waiting for your yes"}`},
		// Mutation seen failing: Subject ignored -> "confirm_pending".
		{"a confirmation that ran the held tool", messages.CallEvent{Kind: messages.EventTool, Epoch: 4, Text: "confirm_pending", Subject: "book_table", Call: "t4.0", Outcome: messages.CallDone, Detail: "reference B-0001"},
			`{"type":"event","kind":"tool","epoch":4,"text":"book_table","call":"t4.0","outcome":"done","detail":"reference B-0001"}`},
		{"no stages on other kinds", messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 1, Text: "hi", Stages: []messages.TurnStage{{Name: "listen", D: time.Millisecond}}},
			`{"type":"event","kind":"user_turn","epoch":1,"text":"hi"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(EventOf(c.in))
			if err != nil || string(b) != c.want {
				t.Fatalf("got %s (%v)\nwant %s", b, err, c.want)
			}
		})
	}
}
