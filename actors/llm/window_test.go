package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// bigTool answers every call at once with about 1 000 estimated tokens,
// numbered, so a result can be told from a compacted one.
func bigTool(t *testing.T) *agent.Registry {
	t.Helper()
	n := 0
	tool := agent.NewFuncTool(agent.Spec{Name: "lookup", Effect: agent.ReadOnly, Timeout: time.Second},
		func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
			n++
			return agent.Output{Content: fmt.Sprintf("result %d %s", n, strings.Repeat("x", 4000))}, nil
		})
	reg, err := agent.NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func lookup(id string) providertest.Response {
	return providertest.Response{Calls: []providertest.ScriptedCall{{ID: id, Name: "lookup", Args: `{}`}}}
}

func estimate(msgs []agent.Message) int {
	n := 0
	for _, m := range msgs {
		n += agent.EstimateMessageTokens(m)
	}
	return n
}

// TestLongCallRequestsStayBounded: a call of four turns with a large
// lookup each, then a turn with a tool loop of four lookups, under a
// window of 3 000 estimated tokens. Every request stays under it and is a
// valid context; each carries its current turn whole (its user message,
// every round's call, the latest round's result in full), older turns are
// left out behind the note, the loop's older results are compacted; the
// context keeps everything; the counters add up to what the provider saw.
// (Mutations seen failing: the round sending r.msgs unwindowed — every
// late request over the bound; the llm actor not counting windowed
// requests — the counters.)
func TestLongCallRequestsStayBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 3000
		utterances := []string{"First question.", "Second question.", "Third question.", "Fourth question.", "Now check everything."}
		s := sim.NewScenario("long-call").Silence(500 * time.Millisecond)
		for _, u := range utterances {
			s = s.Speak(u, time.Second).Silence(4 * time.Second)
		}
		var script []providertest.Response
		for i := range 4 {
			script = append(script, lookup(fmt.Sprint("c", i)), providertest.Response{Text: fmt.Sprintf("Answer %d.", i)})
		}
		for i := range 4 {
			script = append(script, lookup(fmt.Sprint("l", i)))
		}
		script = append(script, providertest.Response{Text: "All checked."})
		r, m := run(t, s, bigTool(t), func(c *session.Config) { c.LLMConfig.Window = agent.WindowConfig{MaxTokens: bound} }, script...)

		reqs := m.Requests()
		if len(reqs) != len(script) {
			t.Fatalf("%d requests, want %d", len(reqs), len(script))
		}
		var windowed, dropped, compacted uint64
		for i, req := range reqs {
			if n := estimate(req.Messages); n > bound {
				t.Errorf("request %d weighs %d estimated tokens, over %d", i, n, bound)
			}
			c := agent.NewContext("")
			c.Append(req.Messages...)
			if err := c.Validate(); err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			hit := false
			for _, msg := range req.Messages {
				var n int
				if msg.Role == agent.RoleSystem {
					if _, err := fmt.Sscanf(msg.Text, agent.WindowNote, &n); err == nil {
						dropped += uint64(n)
						hit = true
					}
				}
				if msg.Role == agent.RoleTool && msg.Text == agent.CompactedResult {
					compacted++
					hit = true
				}
			}
			if hit {
				windowed++
			}
			// The current turn: from its user message, whole.
			u := len(req.Messages) - 1
			for u >= 0 && req.Messages[u].Role != agent.RoleUser {
				u--
			}
			turn := min(i/2, 4)
			if u < 0 || req.Messages[u].Text != utterances[turn] {
				t.Fatalf("request %d does not carry its turn's user message %q", i, utterances[turn])
			}
			calls, last := 0, ""
			for _, msg := range req.Messages[u:] {
				calls += len(msg.ToolCalls)
				if msg.Role == agent.RoleTool {
					last = msg.Text
				}
			}
			wantCalls := i % 2 // the first four turns: one round
			if turn == 4 {
				wantCalls = i - 8
			}
			if calls != wantCalls {
				t.Errorf("request %d carries %d calls of its turn, want %d", i, calls, wantCalls)
			}
			if wantCalls > 0 && !strings.HasPrefix(last, "result ") {
				t.Errorf("request %d: the latest round's result is not whole: %.40q", i, last)
			}
		}
		last := reqs[len(reqs)-1].Messages
		if got := strings.Count(roleLetters(last), "t"); got != 4 {
			t.Errorf("the last request has %d results, want the loop's 4", got)
		}
		if compacted == 0 || dropped == 0 {
			t.Errorf("the call was never cut: dropped %d, compacted %d", dropped, compacted)
		}

		// The context keeps every result whole.
		results := 0
		for i := 0; i < r.Context.Len(); i++ {
			if msg := r.Context.At(i); msg.Role == agent.RoleTool {
				results++
				if !strings.HasPrefix(msg.Text, "result ") {
					t.Errorf("context result %d was changed: %.40q", i, msg.Text)
				}
			}
		}
		if results != 8 {
			t.Errorf("context holds %d results, want 8", results)
		}

		for _, ch := range r.Tree.Children {
			if ch.Name != string(messages.StageLLM) {
				continue
			}
			st := llm.StatsFrom(ch)
			if st.WindowedRequests != windowed || st.WindowDroppedMessages != dropped || st.WindowCompactedResults != compacted || st.RequestsOverWindow != 0 {
				t.Errorf("llm stats %+v; the provider saw %d windowed requests, %d dropped messages, %d compacted results", st, windowed, dropped, compacted)
			}
		}
	})
}

// TestRequestOverTheWindowIsSentAndCounted: a result larger than the
// whole window is the latest round: nothing can be cut, the request goes
// as it is and is counted as over. (Mutation seen failing: the llm actor
// not counting requests_over_window.)
func TestRequestOverTheWindowIsSentAndCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sim.NewScenario("over-window").Silence(500*time.Millisecond).Speak("Look it up.", time.Second).Silence(4 * time.Second)
		r, m := run(t, s, bigTool(t), func(c *session.Config) { c.LLMConfig.Window = agent.WindowConfig{MaxTokens: agent.MinWindowTokens} },
			lookup("c0"), providertest.Response{Text: "Found it."})
		reqs := m.Requests()
		if len(reqs) != 2 || roleLetters(reqs[1].Messages) != "uat" {
			t.Fatalf("requests %d, want 2, the second whole", len(reqs))
		}
		for _, ch := range r.Tree.Children {
			if ch.Name == string(messages.StageLLM) {
				if st := llm.StatsFrom(ch); st.RequestsOverWindow != 1 || st.WindowedRequests != 0 {
					t.Errorf("llm stats %+v, want one request over the window, none cut", st)
				}
			}
		}
	})
}

func roleLetters(msgs []agent.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteByte(string(m.Role)[0])
	}
	return b.String()
}

// TestRequestToolsAreNameOrdered: a tool that needs confirmation makes the
// session offer confirm_pending after the registry's name-ordered specs;
// the llm actor still sends the tools in name order, in every request.
// (Mutation seen failing: WithDefaults not sorting — confirm_pending comes
// after transfer.)
func TestRequestToolsAreNameOrdered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		spec := agent.Spec{Name: "transfer", Effect: agent.SideEffect, Timeout: time.Second, Confirm: true}
		transfer := agent.NewFuncTool(spec, func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
			return agent.Output{Content: "ok"}, nil
		})
		reg, err := agent.NewRegistry(transfer, bigToolSpec("lookup"), bigToolSpec("agenda"))
		if err != nil {
			t.Fatal(err)
		}
		s := sim.NewScenario("tool-order").Silence(500*time.Millisecond).Speak("Hello.", time.Second).Silence(4 * time.Second)
		_, m := run(t, s, reg, nil, providertest.Response{Text: "Hi."})
		reqs := m.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests", len(reqs))
		}
		var names []string
		for _, tl := range reqs[0].Tools {
			names = append(names, tl.Name)
		}
		if want := []string{"agenda", agent.ConfirmPendingTool, "lookup", "transfer"}; !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
	})
}

func bigToolSpec(name string) agent.Tool {
	return agent.NewFuncTool(agent.Spec{Name: name, Effect: agent.ReadOnly, Timeout: time.Second},
		func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
			return agent.Output{Content: name}, nil
		})
}

// TestConfigSortsACopyOfTheTools: WithDefaults sorts the tools by name
// into a copy, leaves the caller's slice alone, and does not copy tools
// already in order; Validate checks the window. (Mutations seen failing:
// sorting in place — the caller's slice changes; no Window.Validate call —
// a 10-token bound passes.)
func TestConfigSortsACopyOfTheTools(t *testing.T) {
	in := []providers.ToolDef{{Name: "c"}, {Name: "a"}, {Name: "b"}}
	got := llm.Config{Tools: in}.WithDefaults().Tools
	if names := fmt.Sprint(got); names != "[{a  []} {b  []} {c  []}]" {
		t.Errorf("tools %s", names)
	}
	if in[0].Name != "c" {
		t.Errorf("the caller's tools were sorted in place: %v", in)
	}
	sorted := []providers.ToolDef{{Name: "a"}, {Name: "b"}}
	if again := (llm.Config{Tools: sorted}).WithDefaults().Tools; &again[0] != &sorted[0] {
		t.Errorf("tools in order were copied")
	}
	if err := (llm.Config{Window: agent.WindowConfig{MaxTokens: 10}}).WithDefaults().Validate(); err == nil {
		t.Errorf("a window of 10 tokens passed Validate")
	}
	if err := (llm.Config{Window: agent.WindowConfig{MaxTokens: -1}}).WithDefaults().Validate(); err != nil {
		t.Errorf("the window off: %v", err)
	}
}

// TestWindowCutStaysPutAcrossTurns: a call past its window, each turn
// adding about 50 estimated tokens of history, under a bound of 1 000
// with a prompt of about 700. Once the history is cut, the cut moves
// seldom (each cut goes down to the low water, and the next requests keep
// it while they fit), and every request that keeps the previous cut
// starts with the previous request whole, so the vendors' prompt caches
// hit. Mutation caught: the round windowing from 0 instead of the call's
// previous cut (the cut then moves at every request after the first
// one: 9 moves in 10 cut requests).
func TestWindowCutStaysPutAcrossTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const turns = 16
		s := sim.NewScenario("steady-window").Silence(500 * time.Millisecond)
		var script []providertest.Response
		for i := range turns {
			s = s.Speak(fmt.Sprintf("Question %d.", i), time.Second).Silence(6 * time.Second)
			script = append(script, providertest.Response{Text: fmt.Sprintf("Answer %d is %s.", i, strings.Repeat("long ", 28))})
		}
		prompt := strings.Repeat("You are a helpful agent. ", 112) // about 700 tokens
		_, m := run(t, s, nil, func(c *session.Config) {
			c.LLMConfig.System = prompt
			c.LLMConfig.Window = agent.WindowConfig{MaxTokens: agent.MinWindowTokens}
		}, script...)
		reqs := m.Requests()
		if len(reqs) != turns {
			t.Fatalf("%d requests, want %d", len(reqs), turns)
		}
		cut, cutRequests, moves := 0, 0, 0
		var prev []agent.Message
		for i, req := range reqs {
			if n := estimate(req.Messages); n > agent.MinWindowTokens {
				t.Errorf("request %d weighs %d, over the bound", i, n)
			}
			n := 0
			for _, msg := range req.Messages {
				if msg.Role == agent.RoleSystem {
					if _, err := fmt.Sscanf(msg.Text, agent.WindowNote, &n); err == nil {
						break
					}
				}
			}
			if n == 0 {
				prev = req.Messages
				continue
			}
			cutRequests++
			if n != cut {
				moves++
			} else if len(prev) > len(req.Messages) || roleLetters(prev) != roleLetters(req.Messages[:len(prev)]) ||
				prev[len(prev)-1].Text != req.Messages[len(prev)-1].Text {
				t.Errorf("request %d keeps the cut %d but does not start with the previous request", i, n)
			}
			cut, prev = n, req.Messages
		}
		if cutRequests < 8 || moves > cutRequests/2 {
			t.Fatalf("the cut moved %d times in %d cut requests", moves, cutRequests)
		}
	})
}
