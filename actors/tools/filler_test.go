package tools_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// assistantTexts lists the assistant messages' texts in context order.
func assistantTexts(c *agent.Context) []string {
	var out []string
	for i := 0; i < c.Len(); i++ {
		if m := c.At(i); m.Role == agent.RoleAssistant && m.Text != "" {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestFillers: while a round's tools run past the filler delay (1.2 s),
// the next phrase of the rotation is spoken; it enters the context after
// the results and before the answer, never in the request that followed;
// a fast tool gets none; a barge-in during the filler keeps what was
// heard. (Mutations seen failing: no filler timer; the filler appended to
// the context when spoken, between the call and its result; the rotation
// not advancing.)
func TestFillers(t *testing.T) {
	ask := func(name string, turns ...string) *sim.Scenario {
		s := sim.NewScenario(name).Silence(500 * time.Millisecond)
		for _, q := range turns {
			s.Speak(q, time.Second).Silence(6 * time.Second)
		}
		return s
	}
	look := providertest.ScriptedCall{ID: "a", Name: "look", Args: `{}`}
	tests := []struct {
		name      string
		scenario  *sim.Scenario
		took      time.Duration
		responses []providertest.Response
		want      []string // assistant texts in context order
	}{
		{
			name: "slow tool", scenario: ask("filler-slow", "Look it up."), took: 3 * time.Second,
			responses: []providertest.Response{{Text: "Let me look.", Calls: []providertest.ScriptedCall{look}}, {Text: "Found it."}},
			want:      []string{"Let me look.", "One moment, please.", "Found it."},
		},
		{
			name: "fast tool", scenario: ask("filler-fast", "Look it up."), took: 300 * time.Millisecond,
			responses: []providertest.Response{{Text: "Let me look.", Calls: []providertest.ScriptedCall{look}}, {Text: "Found it."}},
			want:      []string{"Let me look.", "Found it."},
		},
		{
			name: "rotation", scenario: ask("filler-rotation", "Look it up.", "And again."), took: 3 * time.Second,
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{look}}, {Text: "Found it."},
				{Calls: []providertest.ScriptedCall{look}}, {Text: "Found it again."},
			},
			want: []string{"One moment, please.", "Found it.", "Let me check that.", "Found it again."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newProbe()
				reg, err := agent.NewRegistry(p.tool("look", agent.ReadOnly, tt.took))
				if err != nil {
					t.Fatal(err)
				}
				c := call(t, tt.scenario, reg, tt.responses...)
				r, err := c.Run()
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckInvariants(r, 0); err != nil {
					t.Fatal(err)
				}
				if got := assistantTexts(r.Context); !slices.Equal(got, tt.want) {
					t.Errorf("assistant texts %q, want %q", got, tt.want)
				}
				// The request right after a tool round never carries the
				// filler spoken during that round.
				fresh := map[int]string{1: "One moment", 3: "Let me check that"}
				for i, req := range c.LLM.Requests() {
					for _, m := range req.Messages {
						if f, ok := fresh[i]; ok && strings.Contains(m.Text, f) {
							t.Errorf("request %d carries the filler %q of its own round", i, m.Text)
						}
					}
				}
			})
		})
	}
}

// TestFillerCutByBargeIn: the caller talks over the filler: the context
// keeps the filler's heard prefix at most, and stays valid.
func TestFillerCutByBargeIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		reg, err := agent.NewRegistry(p.tool("look", agent.ReadOnly, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		// Speech ends at 1.5 s; the tool starts at about 2.25 s; the filler
		// is spoken at 3.45 s (first audio 3.65 s); the caller barges in at
		// 3.8 s.
		s := sim.NewScenario("filler-cut").Silence(500*time.Millisecond).Speak("Look it up.", time.Second).
			Silence(2260*time.Millisecond).Speak("Never mind.", 800*time.Millisecond).Silence(5 * time.Second)
		r, err := call(t, s, reg,
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "a", Name: "look", Args: `{}`}}},
			providertest.Response{Text: "Okay."}).Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 1); err != nil {
			t.Fatal(err)
		}
		said := sim.SaidPerTurn(r.Context)
		if len(said) != 2 || len(said[0]) == 0 || len(said[0]) >= 3 {
			t.Errorf("the filler's heard prefix: %q, want a cut 'One moment, please.'", said)
		}
	})
}

// TestFillerOptOut: a round whose calls all opted out of fillers (their
// spec's FillerAfter is negative, like end_call) stays silent while they
// run. (Mutation seen failing: the opt-out ignored — a filler is spoken.)
func TestFillerOptOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		look := p.tool("look", agent.ReadOnly, 3*time.Second)
		spec := look.Spec()
		spec.FillerAfter = -1
		reg, err := agent.NewRegistry(withSpec{look, spec})
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewScenario("filler-opt-out").Silence(500*time.Millisecond).Speak("Look it up.", time.Second).Silence(6 * time.Second)
		r, err := call(t, s, reg,
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "a", Name: "look", Args: `{}`}}},
			providertest.Response{Text: "Found it."}).Run()
		if err != nil {
			t.Fatal(err)
		}
		if got := assistantTexts(r.Context); !slices.Equal(got, []string{"Found it."}) {
			t.Errorf("assistant texts %q, want only the answer", got)
		}
	})
}

// fillerAt is when the caller first heard the filler phrase, from the
// call's start (zero when never).
func fillerAt(r *sim.Result) time.Duration {
	for e, words := range r.Words {
		for _, w := range words {
			if w.Text != "One" {
				continue
			}
			for _, rec := range r.Records {
				if rec.Kind == sim.RecordAudio && rec.Epoch == e && w.Offset >= rec.Offset && w.Offset < rec.Offset+20*time.Millisecond {
					return rec.At.Add(w.Offset - rec.Offset).Sub(r.Start)
				}
			}
		}
	}
	return 0
}

// TestFillerPerToolDelay: with per-tool delays a round fills after the
// smallest delay among its calls; with the fixed default (1.2 s) the
// tools' own delays only switch fillers on or off. (Mutations seen
// failing: per-tool mode taking the largest delay — the filler comes
// 400 ms later; the fixed delay ignored under FillerPerTool=false — the
// filler comes at the tool's 300 ms.)
func TestFillerPerToolDelay(t *testing.T) {
	heard := map[bool]time.Duration{}
	for _, perTool := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			p := newProbe()
			quick, slow := p.tool("quick", agent.ReadOnly, 3*time.Second), p.tool("slow", agent.ReadOnly, 3*time.Second)
			qs, ss := quick.Spec(), slow.Spec()
			qs.FillerAfter, ss.FillerAfter = 700*time.Millisecond, 300*time.Millisecond
			reg, err := agent.NewRegistry(withSpec{quick, qs}, withSpec{slow, ss})
			if err != nil {
				t.Fatal(err)
			}
			s := sim.NewScenario("filler-per-tool").Silence(500*time.Millisecond).Speak("Look both up.", time.Second).Silence(6 * time.Second)
			c := call(t, s, reg,
				providertest.Response{Calls: []providertest.ScriptedCall{{ID: "a", Name: "quick", Args: `{}`}, {ID: "b", Name: "slow", Args: `{}`}}},
				providertest.Response{Text: "Found both."})
			c.Configure = func(cfg *session.Config) { cfg.LLMConfig.FillerPerTool = perTool }
			r, err := c.Run()
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.CheckInvariants(r, 0); err != nil {
				t.Fatal(err)
			}
			heard[perTool] = fillerAt(r) - p.startOf("quick").Sub(r.Start)
		})
	}
	// From the tools' start to the filler's first sound: the delay plus
	// the mock TTS's first byte (the same in both runs).
	if d := heard[false] - heard[true]; d != 900*time.Millisecond {
		t.Fatalf("filler heard %v after the tools started with the fixed delay, %v per tool: want 1.2 s - 300 ms apart", heard[false], heard[true])
	}
}

// TestFillerPerToolRejectsAFixedDelay: per-tool delays and a fixed delay
// together are refused, since one of the two would be ignored.
func TestFillerPerToolRejectsAFixedDelay(t *testing.T) {
	for _, d := range []time.Duration{time.Second, -1} {
		cfg := llm.Config{FillerPerTool: true, FillerAfter: d}.WithDefaults()
		if err := cfg.Validate(); !errors.Is(err, llm.ErrInvalidConfig) {
			t.Errorf("FillerAfter %v with FillerPerTool: %v, want ErrInvalidConfig", d, err)
		}
	}
	if err := (llm.Config{FillerPerTool: true}).WithDefaults().Validate(); err != nil {
		t.Errorf("per tool alone: %v", err)
	}
}
