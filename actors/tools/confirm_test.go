package tools_test

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestConfirmationGate runs a gated transfer through whole calls: held
// with confirmation_required, run once after the user's next reply through
// confirm_pending (under the confirm call's id), refused in the same turn,
// and cleared by a barge-in. (Mutations seen failing: a gated call run at
// once; the turn not reporting the user's turns to the tools actor — the
// yes is refused; the interrupt not clearing the requests.)
func TestConfirmationGate(t *testing.T) {
	transfer := providertest.ScriptedCall{ID: "x", Name: "transfer_call", Args: `{"destination":"+4930123456"}`}
	confirm := func(id string) providertest.ScriptedCall {
		return providertest.ScriptedCall{ID: "y", Name: agent.ConfirmPendingTool, Args: `{"call_id":"` + id + `"}`}
	}
	twoTurns := func(name string, bargeIn bool) *sim.Scenario {
		s := sim.NewScenario(name).Silence(500*time.Millisecond).Speak("Transfer me to sales.", time.Second)
		if bargeIn {
			// The question plays from about 2.75 s; the caller talks over it.
			return s.Silence(1600*time.Millisecond).Speak("Yes, do it.", 800*time.Millisecond).Silence(5 * time.Second)
		}
		return s.Silence(5*time.Second).Speak("Yes, please.", 800*time.Millisecond).Silence(5 * time.Second)
	}
	tests := []struct {
		name      string
		scenario  *sim.Scenario
		responses []providertest.Response
		wantRuns  int
		wantIn    map[string]string // call id -> text its result contains
		// wantLines are the page's tool lines (tool[/subject] outcome[:
		// detail]). Mutations seen failing: the refusal of the gate read as
		// failed (lineOf's confirm case dropped); the held call's line
		// missing (answer not telling the page).
		wantLines []string
	}{
		{
			name:     "confirmed after the reply",
			scenario: twoTurns("gate-ok", false),
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{transfer}},
				{Text: "Shall I transfer you to sales now?"},
				{Calls: []providertest.ScriptedCall{confirm("t1.0")}},
				{Text: "Transferring you now."},
			},
			wantRuns: 1,
			wantIn:   map[string]string{"t1.0": "confirmation_required", "t2.0": "transfer_call done"},
			wantLines: []string{"transfer_call running", "transfer_call held: waiting for your yes",
				"confirm_pending/confirmation running", "confirm_pending/transfer_call done"},
		},
		{
			name:     "confirmed in the same turn",
			scenario: twoTurns("gate-same-turn", false),
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{transfer}},
				{Calls: []providertest.ScriptedCall{confirm("t1.0")}},
				{Text: "I need your confirmation first."},
				{Text: "Okay."},
			},
			wantRuns: 0,
			wantIn:   map[string]string{"t1.1": "the user has not replied since you asked"},
			wantLines: []string{"transfer_call running", "transfer_call held: waiting for your yes",
				"confirm_pending/confirmation running", "confirm_pending/confirmation refused: you had not answered yet"},
		},
		{
			name:     "a barge-in clears the request",
			scenario: twoTurns("gate-barge-in", true),
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{transfer}},
				{Text: "Shall I transfer you to the sales department now, or would you rather wait?"},
				{Calls: []providertest.ScriptedCall{confirm("t1.0")}},
				{Text: "Let me ask again."},
			},
			wantRuns: 0,
			wantIn:   map[string]string{"t2.0": "no request with this call_id is waiting"},
			wantLines: []string{"transfer_call running", "transfer_call held: waiting for your yes",
				"confirm_pending/confirmation running", "confirm_pending/confirmation refused: nothing was waiting for your confirmation"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newProbe()
				tool := p.tool("transfer_call", agent.SideEffect, 100*time.Millisecond)
				spec := tool.Spec()
				spec.Confirm = true
				reg, err := agent.NewRegistry(withSpec{tool, spec})
				if err != nil {
					t.Fatal(err)
				}
				c := call(t, tt.scenario, reg, tt.responses...)
				var mu sync.Mutex
				var lines []string
				c.Configure = func(cfg *session.Config) {
					cfg.OnEvent = func(e messages.CallEvent) {
						if e.Kind != messages.EventTool {
							return
						}
						name := e.Text
						if e.Subject != "" {
							name += "/" + e.Subject
						}
						mu.Lock()
						line := name + " " + e.Outcome
						if e.Detail != "" {
							line += ": " + e.Detail
						}
						lines = append(lines, line)
						mu.Unlock()
					}
				}
				r, err := c.Run()
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				if got := strings.Join(lines, "|"); got != strings.Join(tt.wantLines, "|") {
					t.Errorf("tool lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tt.wantLines, "\n"))
				}
				mu.Unlock()
				if err := sim.CheckInvariants(r, 1); err != nil {
					t.Fatal(err)
				}
				if p.count("transfer_call") != tt.wantRuns {
					t.Errorf("transfer ran %d times, want %d", p.count("transfer_call"), tt.wantRuns)
				}
				for id, want := range tt.wantIn {
					if got := resultOf(r.Context, id); !strings.Contains(got, want) {
						t.Errorf("result of %s: %q, want it to contain %q", id, got, want)
					}
				}
			})
		})
	}
}
