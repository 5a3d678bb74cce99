package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// endOfTurnDelay is the extra silence the turn actor waits for in these
// tests; the mock model's first token takes 300 ms, so it fits inside.
const endOfTurnDelay = 600 * time.Millisecond

func speculating(on bool) func(*session.Config) { return speculatingFor(on, endOfTurnDelay) }

func speculatingFor(on bool, delay time.Duration) func(*session.Config) {
	return func(c *session.Config) {
		c.Turn.EndOfTurnDelay = delay
		c.Turn.Speculate = on
	}
}

func run(t *testing.T, s *sim.Scenario, reg *agent.Registry, configure func(*session.Config), responses ...providertest.Response) (*sim.Result, *providertest.MockLLM) {
	t.Helper()
	m := providertest.NewMockLLM(providertest.LLMConfig{}, responses...)
	r, err := (&sim.Call{
		Scenario: s, Linger: 3 * time.Second, Tools: reg, Configure: configure,
		STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
		LLM: m,
		TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
	}).Run()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.CheckInvariants(r, 0); err != nil {
		t.Fatal(err)
	}
	return r, m
}

func roles(c *agent.Context) string {
	var b strings.Builder
	for i := 0; i < c.Len(); i++ {
		m := c.At(i)
		b.WriteString(string(m.Role)[:1])
		if m.Role == agent.RoleUser || (m.Role == agent.RoleAssistant && m.Text != "") {
			b.WriteString("(" + m.Text + ")")
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// TestSpeculationHidesTheFirstToken: with an end-of-turn delay of 600 ms
// and a model that answers its first token in 300 ms, a speculative start
// takes those 300 ms out of the first audio, exactly; the call is
// otherwise the same (one request, the same context). (Mutations seen
// failing: the turn actor never speculating — no gain; the llm actor not
// holding a speculation's text — audio before the turn ended, the
// invariant "no audio of an unended turn" via an earlier first audio;
// commit not releasing the held text — no answer at all.)
func TestSpeculationHidesTheFirstToken(t *testing.T) {
	var base, spec time.Duration
	for _, on := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			s := sim.NewScenario("speculate").Silence(500*time.Millisecond).Speak("What are your opening hours?", time.Second).Silence(4 * time.Second)
			r, m := run(t, s, nil, speculating(on), providertest.Response{Text: "We open at nine."})
			fa := r.FirstAudios()
			if len(fa) != 1 {
				t.Fatalf("speculate=%v: first audios %v", on, fa)
			}
			if on {
				spec = fa[0]
			} else {
				base = fa[0]
			}
			if n := len(m.Requests()); n != 1 {
				t.Errorf("speculate=%v: %d requests, want 1", on, n)
			}
			if got := roles(r.Context); got != "u(What are your opening hours?) a(We open at nine.)" {
				t.Errorf("speculate=%v: context %s", on, got)
			}
		})
	}
	if base-spec != 300*time.Millisecond {
		t.Fatalf("first audio %v without speculation, %v with it: want exactly the 300 ms first token saved", base, spec)
	}
}

// probeTool records when a tool started, how often, and whether its
// context was cancelled.
type probeTool struct {
	mu        sync.Mutex
	started   []time.Time
	cancelled int
	cancelAt  time.Time
}

func (p *probeTool) tool(name string, effect agent.Effect, d time.Duration) agent.Tool {
	return agent.NewFuncTool(agent.Spec{Name: name, Effect: effect, Timeout: 10 * time.Second},
		func(ctx context.Context, _ json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
			p.mu.Lock()
			p.started = append(p.started, time.Now())
			p.mu.Unlock()
			select {
			case <-time.After(d):
				return agent.Output{Content: name + " done"}, nil
			case <-ctx.Done():
				p.mu.Lock()
				p.cancelled++
				p.cancelAt = time.Now()
				p.mu.Unlock()
				return agent.Output{}, ctx.Err()
			}
		})
}

// TestSpeculationHoldsTheBookingUntilTheTurnEnds: the speculative answer
// asks for a lookup and a booking; the lookup runs at once, the booking
// starts exactly when the turn ends (the commit), and the model hears the
// results in issue order. (Mutations seen failing: the round not marking
// its RunTools speculative — the booking starts with the lookup; the llm
// actor not passing the Commit on — the booking never runs.)
func TestSpeculationHoldsTheBookingUntilTheTurnEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		book, look := &probeTool{}, &probeTool{}
		reg, err := agent.NewRegistry(book.tool("book", agent.SideEffect, 100*time.Millisecond), look.tool("lookup", agent.ReadOnly, 100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewScenario("speculate-tools").Silence(500*time.Millisecond).Speak("Book the terrace if it is free.", time.Second).Silence(5 * time.Second)
		r, m := run(t, s, reg, speculating(true),
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{}`}, {ID: "b", Name: "lookup", Args: `{}`}}},
			providertest.Response{Text: "Done, the terrace is yours."})
		if len(r.Timelines) != 1 {
			t.Fatalf("timelines %+v", r.Timelines)
		}
		turnEnd := r.Timelines[0].Marks[messages.MarkTurnEnd]
		if len(book.started) != 1 || len(look.started) != 1 {
			t.Fatalf("book ran %d times, lookup %d", len(book.started), len(look.started))
		}
		if !look.started[0].Before(turnEnd) {
			t.Errorf("lookup started %v after the turn end: not speculative", look.started[0].Sub(turnEnd))
		}
		if !book.started[0].Equal(turnEnd) {
			t.Errorf("booking started %v from the turn end, want exactly at it", book.started[0].Sub(turnEnd))
		}
		if got := roles(r.Context); got != "u(Book the terrace if it is free.) a t t a(Done, the terrace is yours.)" {
			t.Errorf("context %s", got)
		}
		if msgs := toolTexts(r.Context); msgs != "book done|lookup done" {
			t.Errorf("tool results %s, want issue order", msgs)
		}
		if n := len(m.Requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
}

func toolTexts(c *agent.Context) string {
	var out []string
	for i := 0; i < c.Len(); i++ {
		if m := c.At(i); m.Role == agent.RoleTool {
			out = append(out, m.Text)
		}
	}
	return strings.Join(out, "|")
}

// TestDiscardedSpeculationLeavesNoTrace: the caller pauses inside the
// end-of-turn delay and goes on. The speculation made in the pause is
// taken back as soon as they speak: none of its text is spoken, its
// booking never runs, its lookup is cancelled, and the context holds only
// the whole turn and its answer. (Mutations seen failing:
// the llm actor not cutting the context back — the speculative user
// message stays; the llm actor not passing the Discard on — the lookup
// runs to its end; the turn actor discarding only at the next transcript,
// not at the caller's speech — the lookup runs a second longer.)
func TestDiscardedSpeculationLeavesNoTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		book, look := &probeTool{}, &probeTool{}
		reg, err := agent.NewRegistry(book.tool("book", agent.SideEffect, 100*time.Millisecond), look.tool("lookup", agent.ReadOnly, 2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewScenario("speculate-discard").Silence(500*time.Millisecond).
			Speak("Book a table.", time.Second).Silence(time.Second).
			Speak("Actually, just tell me the hours.", time.Second).Silence(4 * time.Second)
		// The pause ends 300+123 ms (hangover, final) + 300 ms (first
		// token) + the tokens after the speculation began, inside the
		// 1.5 s delay.
		r, m := run(t, s, reg, speculatingFor(true, 1500*time.Millisecond),
			providertest.Response{Text: "SPECULATIVE ", Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{}`}, {ID: "b", Name: "lookup", Args: `{}`}}},
			providertest.Response{Text: "We open at nine."})
		for _, sp := range r.Spoken {
			if strings.Contains(sp, "SPECULATIVE") {
				t.Fatalf("the discarded speculation was spoken: %q", r.Spoken)
			}
		}
		if len(book.started) != 0 || len(look.started) != 1 || look.cancelled != 1 {
			t.Fatalf("book ran %d times; lookup ran %d, cancelled %d", len(book.started), len(look.started), look.cancelled)
		}
		// Taken back when the caller spoke again (2.5 s), not when the
		// second utterance's transcript came (after 3.5 s).
		if at := look.cancelAt.Sub(r.Start); at < 2500*time.Millisecond || at > 2700*time.Millisecond {
			t.Errorf("lookup cancelled at %v, want soon after the caller went on at 2.5 s", at)
		}
		if got := roles(r.Context); got != "u(Book a table. Actually, just tell me the hours.) a(We open at nine.)" {
			t.Errorf("context %s", got)
		}
		reqs := m.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want the speculation's and the turn's", len(reqs))
		}
		if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Text != "Book a table." {
			t.Errorf("speculative request ended with %+v", last)
		}
		if err := r.Context.Validate(); err != nil {
			t.Error(err)
		}
		// The pause's speculation was taken back; the whole turn's was
		// committed.
		for _, ch := range r.Tree.Children {
			if ch.Name == string(messages.StageLLM) {
				want := llm.Stats{Requests: 2, Speculations: 2, SpeculationsCommitted: 1, SpeculationsDiscarded: 1, InterruptedToolCalls: 0}
				if got := llm.StatsFrom(ch); got != want {
					t.Errorf("llm stats %+v, want %+v", got, want)
				}
			}
		}
	})
}
