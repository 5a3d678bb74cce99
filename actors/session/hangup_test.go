package session_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestHangUpAnywhere hangs up at points all over a call: the call ends
// with reason "hangup", nothing panics, and the synctest bubble proves that
// no goroutine of the call (reader, provider pumps, round stream, tool
// bodies) outlives it. The call asks a slow tool, so one hang-up lands
// while a SideEffect call runs. (Mutation seen failing: the call actor of a
// SideEffect tool not cancelling and waiting for its body when it stops —
// the bubble reports the tool's goroutine left behind.)
func TestHangUpAnywhere(t *testing.T) {
	tests := []struct {
		name string
		at   time.Duration
	}{
		{"before the caller speaks", 200 * time.Millisecond},
		{"while the caller speaks", 1200 * time.Millisecond},
		{"while the stt finalizes", 2350 * time.Millisecond},
		{"while the llm thinks", 2600 * time.Millisecond},
		{"while the tool runs", 3500 * time.Millisecond},
		{"while the bot speaks", 6 * time.Second},
		{"after everything", 11 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := sim.NewScenario("hangup").Silence(500*time.Millisecond).
					Speak("Please book the table for tonight.", 1500*time.Millisecond).Silence(10 * time.Second)
				booking := agent.NewFuncTool(agent.Spec{Name: "book_table", Effect: agent.SideEffect, Timeout: 10 * time.Second},
					func(ctx context.Context, _ json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
						select {
						case <-time.After(2 * time.Second):
							return agent.Output{Content: "booked"}, nil
						case <-ctx.Done():
							return agent.Output{}, ctx.Err()
						}
					})
				reg, err := agent.NewRegistry(booking)
				if err != nil {
					t.Fatal(err)
				}
				c := &sim.Call{
					Scenario: s, Linger: time.Second, Tools: reg,
					STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
					LLM: providertest.NewMockLLM(providertest.LLMConfig{},
						providertest.Response{Text: "One moment.", Calls: []providertest.ScriptedCall{{ID: "c1", Name: "book_table", Args: `{}`}}},
						providertest.Response{Text: "Your table is booked for tonight."}),
					TTS:    providertest.NewMockTTS(providertest.TTSConfig{}),
					During: []sim.Action{{At: tt.at, Do: func(h *sim.Handle) { h.Conn.HangUp() }}},
				}
				r, err := c.Run()
				if r == nil {
					t.Fatalf("run: %v", err)
				}
				if r.Ended.Reason != "hangup" || r.Ended.Err != nil {
					t.Fatalf("call ended %+v, want a clean hang-up", r.Ended)
				}
			})
		})
	}
}
