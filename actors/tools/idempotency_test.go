package tools_test

import (
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/session"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// resultOf returns the content of call id's tool message.
func resultOf(c *agent.Context, id string) string {
	for _, m := range toolMessages(c) {
		if m.ToolCallID == id {
			return m.Text
		}
	}
	return ""
}

func notes(c *agent.Context, substr string) int {
	n := 0
	for i := 0; i < c.Len(); i++ {
		if m := c.At(i); m.Role == agent.RoleSystem && strings.Contains(m.Text, substr) {
			n++
		}
	}
	return n
}

// TestSideEffectNeverRunsTwice drives the record through whole calls:
//   - a repeat of a booking later in the same turn is answered already_done;
//   - a Repeatable tool runs again;
//   - two identical calls of one response both run;
//   - after a barge-in cut the round, the regenerated identical booking is
//     answered duplicate_call while the first still runs, and its result
//     reaches the model once, as a note;
//   - when the first finished (and its note went out) before the
//     regeneration, the regenerated call is answered already_reported.
//
// Mutations seen failing: no orphan check in the tools actor (the booking
// runs twice); interrupts not marking in-flight calls as orphans (same);
// Repeatable ignored by the check (the repeatable case answers
// already_done); the late result not marked reported (the last case is
// answered with a replay of the result instead).
func TestSideEffectNeverRunsTwice(t *testing.T) {
	book := `{"day":"friday"}`
	tests := []struct {
		name string
		// build the call: the probe's tools are "book" (SideEffect, 2 s)
		// and "ring" (SideEffect, repeatable, 100 ms)
		scenario  func() *sim.Scenario
		responses []providertest.Response
		bookTime  time.Duration
		check     func(t *testing.T, p *probe, r *sim.Result)
	}{
		{
			name: "repeat later in the turn",
			scenario: func() *sim.Scenario {
				return sim.NewScenario("repeat").Silence(500*time.Millisecond).Speak("Book Friday.", time.Second).Silence(6 * time.Second)
			},
			bookTime: 100 * time.Millisecond,
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: book}}},
				{Calls: []providertest.ScriptedCall{{ID: "b", Name: "book", Args: `{ "day" : "friday" }`}}},
				{Text: "Booked."},
			},
			check: func(t *testing.T, p *probe, r *sim.Result) {
				if p.count("book") != 1 {
					t.Errorf("book ran %d times, want 1", p.count("book"))
				}
				if !strings.Contains(resultOf(r.Context, "t1.1"), `"already_done"`) {
					t.Errorf("the repeat: %q, want already_done", resultOf(r.Context, "t1.1"))
				}
			},
		},
		{
			name: "repeatable runs again",
			scenario: func() *sim.Scenario {
				return sim.NewScenario("repeatable").Silence(500*time.Millisecond).Speak("Ring twice.", time.Second).Silence(6 * time.Second)
			},
			bookTime: 100 * time.Millisecond,
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{{ID: "a", Name: "ring", Args: `{}`}}},
				{Calls: []providertest.ScriptedCall{{ID: "b", Name: "ring", Args: `{}`}}},
				{Text: "Done."},
			},
			check: func(t *testing.T, p *probe, r *sim.Result) {
				if p.count("ring") != 2 {
					t.Errorf("ring ran %d times, want 2", p.count("ring"))
				}
			},
		},
		{
			name: "two identical calls of one response both run",
			scenario: func() *sim.Scenario {
				return sim.NewScenario("twins").Silence(500*time.Millisecond).Speak("Book two tables.", time.Second).Silence(6 * time.Second)
			},
			bookTime: 100 * time.Millisecond,
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: book}, {ID: "b", Name: "book", Args: book}}},
				{Text: "Both booked."},
			},
			check: func(t *testing.T, p *probe, r *sim.Result) {
				if p.count("book") != 2 {
					t.Errorf("book ran %d times, want 2", p.count("book"))
				}
			},
		},
		{
			name: "regenerated while the first still runs",
			// Speech ends at 1.5 s; the booking starts at about 2.25 s and
			// takes 4 s; the caller barges in at 3 s; the regenerated turn
			// asks again at about 4.75 s, while the first still runs.
			scenario: func() *sim.Scenario {
				return sim.NewScenario("regen-running").Silence(500*time.Millisecond).Speak("Book Friday.", time.Second).
					Silence(1500*time.Millisecond).Speak("Is it done?", 800*time.Millisecond).Silence(8 * time.Second)
			},
			bookTime: 4 * time.Second,
			responses: []providertest.Response{
				{Text: "One moment.", Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: book}}},
				{Calls: []providertest.ScriptedCall{{ID: "b", Name: "book", Args: book}}},
				{Text: "It is on its way."},
			},
			check: func(t *testing.T, p *probe, r *sim.Result) {
				if p.count("book") != 1 {
					t.Errorf("book ran %d times, want 1", p.count("book"))
				}
				if !strings.Contains(resultOf(r.Context, "t2.0"), `"duplicate_call"`) {
					t.Errorf("the regenerated call: %q, want duplicate_call", resultOf(r.Context, "t2.0"))
				}
				if n := notes(r.Context, "book done"); n != 1 {
					t.Errorf("%d notes of the booking, want 1", n)
				}
			},
		},
		{
			name: "regenerated after the first finished",
			// The booking takes 1 s: it finishes at about 3.25 s, after the
			// barge-in (3 s) and before the regenerated turn (4.75 s).
			scenario: func() *sim.Scenario {
				return sim.NewScenario("regen-done").Silence(500*time.Millisecond).Speak("Book Friday.", time.Second).
					Silence(1500*time.Millisecond).Speak("Is it done?", 800*time.Millisecond).Silence(8 * time.Second)
			},
			bookTime: time.Second,
			responses: []providertest.Response{
				{Text: "One moment.", Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: book}}},
				{Calls: []providertest.ScriptedCall{{ID: "b", Name: "book", Args: book}}},
				{Text: "Yes, it is booked."},
			},
			check: func(t *testing.T, p *probe, r *sim.Result) {
				if p.count("book") != 1 {
					t.Errorf("book ran %d times, want 1", p.count("book"))
				}
				if !strings.Contains(resultOf(r.Context, "t2.0"), `"already_reported"`) {
					t.Errorf("the regenerated call: %q, want already_reported", resultOf(r.Context, "t2.0"))
				}
				if n := notes(r.Context, "book done"); n != 1 {
					t.Errorf("%d notes of the booking, want 1", n)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newProbe()
				ring := p.tool("ring", agent.SideEffect, 100*time.Millisecond)
				spec := ring.Spec()
				spec.Repeatable = true
				reg, err := agent.NewRegistry(p.tool("book", agent.SideEffect, tt.bookTime), withSpec{ring, spec})
				if err != nil {
					t.Fatal(err)
				}
				r, err := call(t, tt.scenario(), reg, tt.responses...).Run()
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckInvariants(r, 1); err != nil {
					t.Fatal(err)
				}
				tt.check(t, p, r)
			})
		})
	}
}

// withSpec overrides a tool's spec.
type withSpec struct {
	agent.Tool
	spec agent.Spec
}

func (w withSpec) Spec() agent.Spec { return w.spec }

// TestToolsRestartLosesInFlightCallsLoudly: an operator restart of the
// tools actor stops the SideEffect call actors. Their calls are recorded
// lost, never run again, and the waiting round is answered at once that the
// outcome is unknown (instead of waiting for an answer that cannot come).
// (Mutation seen failing: Restarting not answering what it stops — the
// round waits until its deadline and the regenerated call runs the booking
// again.)
func TestToolsRestartLosesInFlightCallsLoudly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		reg, err := agent.NewRegistry(p.tool("book", agent.SideEffect, 4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewScenario("restart-tools").Silence(500*time.Millisecond).Speak("Book Friday.", time.Second).
			Silence(4*time.Second).Speak("Did it work?", 800*time.Millisecond).Silence(6 * time.Second)
		c := call(t, s, reg,
			providertest.Response{Text: "One moment.", Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{"day":"friday"}`}}},
			providertest.Response{Text: "I could not confirm it."},
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "b", Name: "book", Args: `{"day":"friday"}`}}},
			providertest.Response{Text: "I am not sure it went through."})
		c.During = []sim.Action{{At: 3 * time.Second, Do: func(h *sim.Handle) {
			if _, err := h.Request(&messages.Restart{Stage: messages.StageTools}); err != nil {
				t.Error(err)
			}
		}}}
		r, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 1); err != nil {
			t.Fatal(err)
		}
		if p.count("book") != 1 {
			t.Errorf("book ran %d times, want 1", p.count("book"))
		}
		if !strings.Contains(resultOf(r.Context, "t1.0"), `"unknown_outcome"`) {
			t.Errorf("the cut call: %q, want unknown_outcome", resultOf(r.Context, "t1.0"))
		}
		if !strings.Contains(resultOf(r.Context, "t2.0"), `"unknown_outcome"`) {
			t.Errorf("the regenerated call: %q, want unknown_outcome", resultOf(r.Context, "t2.0"))
		}
	})
}

// TestSideEffectTimeoutKeepsRunning: a booking slower than its timeout.
// Its slot is answered at the timeout (timed out, still running, do not
// repeat), the model goes on, the booking finishes once and its result
// follows as a note; a booking that hangs is stopped at the 120 s backstop
// and the note says its outcome is unknown. (Mutations seen failing: no
// slot timer — the round waits for the booking; the slot answered but the
// late result dropped instead of noted.)
func TestSideEffectTimeoutKeepsRunning(t *testing.T) {
	tests := []struct {
		name     string
		takes    time.Duration
		wantNote string
	}{
		{"finishes after its timeout", 3 * time.Second, "book done"},
		{"hangs until the backstop", time.Hour, "unknown_outcome"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newProbe()
				book := p.tool("book", agent.SideEffect, tt.takes)
				spec := book.Spec()
				spec.Timeout = time.Second
				reg, err := agent.NewRegistry(withSpec{book, spec})
				if err != nil {
					t.Fatal(err)
				}
				s := sim.NewScenario("slow-booking").Silence(500*time.Millisecond).Speak("Book Friday.", time.Second).
					Silence(125 * time.Second)
				r, err := call(t, s, reg,
					providertest.Response{Text: "One moment.", Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{}`}}},
					providertest.Response{Text: "It is still going through; I will tell you when it is done."}).Run()
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckInvariants(r, 0); err != nil {
					t.Fatal(err)
				}
				if p.count("book") != 1 {
					t.Errorf("book ran %d times, want 1", p.count("book"))
				}
				if got := resultOf(r.Context, "t1.0"); !strings.Contains(got, `"timeout"`) || !strings.Contains(got, "still running") {
					t.Errorf("the slot: %q, want a timeout that says the call goes on", got)
				}
				if n := notes(r.Context, tt.wantNote); n != 1 {
					t.Errorf("%d notes with %q, want 1: %s", n, tt.wantNote, r.Context.Fingerprint())
				}
			})
		})
	}
}

// TestToolsRestartAfterASlotTimeout: a booking's slot was answered at its
// timeout while a slower lookup of the same round still runs; then the
// tools actor restarts. The booking is lost and the model learns it from a
// note (its slot was taken already). (Mutation seen failing: the lost
// result offered to the answered slot, where it vanishes.)
func TestToolsRestartAfterASlotTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		book := p.tool("book", agent.SideEffect, time.Hour)
		spec := book.Spec()
		spec.Timeout = 500 * time.Millisecond
		reg, err := agent.NewRegistry(withSpec{book, spec}, p.tool("look", agent.ReadOnly, 3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		// The round asks at about 2.25 s: the booking's slot is answered at
		// 2.75 s; the restart comes at 3.5 s, while the lookup runs.
		s := sim.NewScenario("restart-after-timeout").Silence(500*time.Millisecond).Speak("Book and look.", time.Second).Silence(8 * time.Second)
		c := call(t, s, reg,
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{}`}, {ID: "b", Name: "look", Args: `{}`}}},
			providertest.Response{Text: "Something went wrong."})
		c.During = []sim.Action{{At: 3500 * time.Millisecond, Do: func(h *sim.Handle) {
			if _, err := h.Request(&messages.Restart{Stage: messages.StageTools}); err != nil {
				t.Error(err)
			}
		}}}
		r, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if n := notes(r.Context, "unknown_outcome"); n != 1 {
			t.Errorf("%d notes of the lost booking, want 1: %s", n, r.Context.Fingerprint())
		}
	})
}

// holdUntilRoundEnded reproduces a race at the tools actor: the caller
// barged in while a booking ran, and the round's end (it was waiting for
// the booking) reaches the tools actor before the booking's end and before
// the interrupt does.
func holdUntilRoundEnded(next actor.ReceiverFunc) actor.ReceiverFunc {
	var held []*actor.MessageEnvelope
	released := false
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		switch env.Message.(type) {
		case *messages.ToolDone, *messages.Interrupt:
			if !released {
				held = append(held, env)
				return
			}
		case *messages.RoundEnded:
			next(c, env)
			if !released {
				released = true
				for _, h := range held {
					next(c, h)
				}
				held = nil
			}
			return
		}
		next(c, env)
	}
}

// TestUndeliveredResultsBecomeNotes: a booking whose round ended while it
// ran (the caller barged in) never reaches the context as a tool result;
// it is reported once as a note, and the regenerated identical booking is
// answered already_reported instead of running again (the delivery
// guard). (Mutation seen failing: the round's end not marking its running
// batch gone — the result is answered to a round that ended, no note, and
// the table is booked twice.)
func TestUndeliveredResultsBecomeNotes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		reg, err := agent.NewRegistry(p.tool("book", agent.SideEffect, 300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewScenario("undelivered").Silence(500*time.Millisecond).Speak("Book Friday.", time.Second).
			Silence(1500*time.Millisecond).Speak("Did it work?", 800*time.Millisecond).Silence(6 * time.Second)
		c := call(t, s, reg,
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{"day":"friday"}`}}},
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "b", Name: "book", Args: `{"day":"friday"}`}}},
			providertest.Response{Text: "Yes, it is booked."})
		c.Configure = func(cfg *session.Config) {
			cfg.Taps = map[messages.Stage]actor.ReceiverMiddleware{messages.StageTools: holdUntilRoundEnded}
		}
		r, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 1); err != nil {
			t.Fatal(err)
		}
		if p.count("book") != 1 {
			t.Errorf("book ran %d times, want 1", p.count("book"))
		}
		if n := notes(r.Context, "book done"); n != 1 {
			t.Errorf("%d notes of the booking, want 1: %s", n, r.Context.Fingerprint())
		}
		if got := resultOf(r.Context, "t2.0"); !strings.Contains(got, `"already_reported"`) {
			t.Errorf("the regenerated booking: %q, want already_reported", got)
		}
	})
}
