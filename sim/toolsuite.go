package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

// toolProbe records what the tool suite's tools did, in virtual time.
type toolProbe struct {
	mu       sync.Mutex
	starts   map[string][]time.Time
	finishes map[string][]time.Time
}

func newToolProbe() *toolProbe {
	return &toolProbe{starts: map[string][]time.Time{}, finishes: map[string][]time.Time{}}
}

// tool makes a tool that answers answer(args) after d, recording its run.
func (p *toolProbe) tool(spec agent.Spec, d time.Duration, answer func(json.RawMessage) string) agent.Tool {
	return agent.NewFuncTool(spec, func(ctx context.Context, args json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
		p.mu.Lock()
		p.starts[spec.Name] = append(p.starts[spec.Name], time.Now())
		p.mu.Unlock()
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return agent.Output{}, ctx.Err()
		}
		p.mu.Lock()
		p.finishes[spec.Name] = append(p.finishes[spec.Name], time.Now())
		p.mu.Unlock()
		return agent.Output{Content: answer(args)}, nil
	})
}

// record copies name's start and finish times, read under p.mu: a tool
// cut at its timeout may still be running.
func (p *toolProbe) record(name string) (starts, finishes []time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.starts[name]), slices.Clone(p.finishes[name])
}

func (p *toolProbe) runs(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.starts[name])
}

// toolRegistry is the suite's tools: weather and customer lookups, a
// forecast with at most 3 days, a booking (SideEffect), a slow lookup and
// one that hangs past its 1 s timeout.
func (p *toolProbe) registry() *agent.Registry {
	spec := func(name string, effect agent.Effect, params string) agent.Spec {
		s := agent.NewSpec(name, "", effect)
		s.Parameters = json.RawMessage(params)
		return s
	}
	city := func(args json.RawMessage) string {
		var a struct{ City string }
		_ = json.Unmarshal(args, &a)
		return fmt.Sprintf(`{"city":%q,"weather":"sunny"}`, a.City)
	}
	hang := spec("hanging_lookup", agent.ReadOnly, `{"type":"object"}`)
	hang.Timeout = time.Second
	return mustRegistry(
		p.tool(spec("get_weather", agent.ReadOnly, `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`), 300*msec, city),
		p.tool(spec("get_customer", agent.ReadOnly, `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`), 200*msec,
			func(json.RawMessage) string { return `{"name":"Kaya","city":"Izmir"}` }),
		p.tool(spec("get_forecast", agent.ReadOnly, `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":3}},"required":["city","days"]}`), 300*msec, city),
		p.tool(spec("book_table", agent.SideEffect, `{"type":"object","properties":{"day":{"type":"string"},"people":{"type":"integer"}},"required":["day","people"]}`), 400*msec,
			func(json.RawMessage) string { return `{"booking":"BK-1001"}` }),
		p.tool(spec("slow_lookup", agent.ReadOnly, `{"type":"object"}`), 2*time.Second, func(json.RawMessage) string { return `{"found":true}` }),
		p.tool(hang, time.Hour, func(json.RawMessage) string { return "never" }),
	)
}

// ToolCases is the tool suite: the reference's scenarios S1 to S6 through
// the whole production pipeline with the mock LLM, each in two shapes: the
// calls' fragments one call after the other, and interleaved across calls.
// S5 checks that the text before a slow tool is spoken while it runs and
// the filler after it.
func ToolCases() []Case { return ToolCasesOver(nil) }

// ScriptedLLM makes a provider that answers the responses rs in order
// (fragments of different calls interleaved when asked): a real adapter
// over its vendor-format mock. requests counts the requests the mock got;
// cleanup closes both once the call has ended.
type ScriptedLLM func(rs []providertest.Response, interleave bool) (p providers.LLM, requests func() int, cleanup func(), err error)

// ToolCasesOver is the tool suite with the LLM made by scripted instead of
// the mock LLM (nil: the mock LLM), so every adapter runs S1-S6 over its
// own wire format with the same checks.
func ToolCasesOver(scripted ScriptedLLM) []Case {
	var out []Case
	for _, interleave := range []bool{false, true} {
		shape := "plain"
		if interleave {
			shape = "interleaved"
		}
		for _, s := range toolScenarios() {
			var p *toolProbe
			var requests func() int
			var buildErr error
			out = append(out, Case{
				Name: "tools_" + s.name + "_" + shape,
				Build: func() *Call {
					p = newToolProbe()
					sc := NewScenario(s.name).Silence(500*msec).Speak(s.ask, time.Second).Silence(s.wait)
					rs := s.responses()
					for i := range rs {
						rs[i].Interleave = interleave
					}
					c := base(sc)
					c.Tools = p.registry()
					if scripted == nil {
						llm := providertest.NewMockLLM(providertest.LLMConfig{}, rs...)
						c.LLM, requests = llm, func() int { return len(llm.Requests()) }
						return c
					}
					c.Provider, requests, c.Cleanup, buildErr = scripted(rs, interleave)
					return c
				},
				Check: func(r *Result, c *Call) error {
					if buildErr != nil {
						return buildErr
					}
					if got, want := requests(), len(s.responses()); got != want {
						return fmt.Errorf("%w: %d LLM requests, want %d", ErrCheck, got, want)
					}
					return errors.Join(expect(r, 1, 0), s.check(r, p))
				},
			})
		}
	}
	return out
}

type toolScenario struct {
	name, ask string
	wait      time.Duration
	responses func() []providertest.Response
	check     func(r *Result, p *toolProbe) error
}

// callResults returns the tool messages' ids and contents in context
// order.
func callResults(r *Result) (ids, contents []string) {
	for i := 0; i < r.Context.Len(); i++ {
		if m := r.Context.At(i); m.Role == agent.RoleTool {
			ids, contents = append(ids, m.ToolCallID), append(contents, m.Text)
		}
	}
	return ids, contents
}

func wantResults(r *Result, want ...string) error {
	ids, contents := callResults(r)
	if len(contents) != len(want) {
		return fmt.Errorf("%w: %d tool results %v, want %d", ErrCheck, len(contents), contents, len(want))
	}
	for i, w := range want {
		if !strings.Contains(contents[i], w) {
			return fmt.Errorf("%w: result %d (%s) is %q, want it to contain %q", ErrCheck, i, ids[i], contents[i], w)
		}
	}
	return nil
}

func toolScenarios() []toolScenario {
	weather := func(id, c string) providertest.ScriptedCall {
		return providertest.ScriptedCall{ID: id, Name: "get_weather", Args: fmt.Sprintf(`{"city":%q}`, c)}
	}
	return []toolScenario{
		{
			name: "S1_parallel", ask: "What is the weather in Ankara, Izmir and Paris?", wait: 6 * time.Second,
			responses: func() []providertest.Response {
				return []providertest.Response{
					{Calls: []providertest.ScriptedCall{weather("a", "Ankara"), weather("b", "Izmir"), weather("c", "Paris")}},
					{Text: "It is sunny in all three cities."},
				}
			},
			check: func(r *Result, p *toolProbe) error {
				// Parallel: all three start at once, before the first ends,
				// and the tool phase lasts exactly the slowest tool.
				s, f := p.record("get_weather")
				if len(s) != 3 || len(f) != 3 || !s[0].Equal(s[2]) || s[2].After(f[0]) || f[2].Sub(s[0]) != 300*msec {
					return fmt.Errorf("%w: starts %v finishes %v: not run in parallel", ErrCheck, s, f)
				}
				return wantResults(r, "Ankara", "Izmir", "Paris")
			},
		},
		{
			name: "S2_chain", ask: "What is the weather where customer 42 lives?", wait: 6 * time.Second,
			responses: func() []providertest.Response {
				return []providertest.Response{
					{Calls: []providertest.ScriptedCall{{ID: "a", Name: "get_customer", Args: `{"id":42}`}}},
					{Calls: []providertest.ScriptedCall{weather("b", "Izmir")}},
					{Text: "Kaya lives in Izmir, where it is sunny."},
				}
			},
			check: func(r *Result, p *toolProbe) error {
				_, c := p.record("get_customer")
				w, _ := p.record("get_weather")
				if len(c) != 1 || len(w) != 1 || w[0].Before(c[0]) {
					return fmt.Errorf("%w: the weather lookup did not follow the customer lookup", ErrCheck)
				}
				return wantResults(r, "Kaya", "Izmir")
			},
		},
		{
			name: "S3_repeated_booking", ask: "Book a table for two on Friday.", wait: 6 * time.Second,
			responses: func() []providertest.Response {
				book := providertest.ScriptedCall{Name: "book_table", Args: `{"day":"friday","people":2}`}
				a, b := book, book
				a.ID, b.ID = "a", "b"
				return []providertest.Response{
					{Text: "Booking it now.", Calls: []providertest.ScriptedCall{a}},
					{Calls: []providertest.ScriptedCall{b}},
					{Text: "Your table for two on Friday is booked."},
				}
			},
			check: func(r *Result, p *toolProbe) error {
				if n := p.runs("book_table"); n != 1 {
					return fmt.Errorf("%w: the table was booked %d times", ErrCheck, n)
				}
				return wantResults(r, "BK-1001", `"already_done"`)
			},
		},
		{
			name: "S4_invalid_argument", ask: "What is the forecast for Izmir for the next seven days?", wait: 5 * time.Second,
			responses: func() []providertest.Response {
				return []providertest.Response{
					{Calls: []providertest.ScriptedCall{{ID: "a", Name: "get_forecast", Args: `{"city":"Izmir","days":7}`}}},
					{Text: "I can only look three days ahead."},
				}
			},
			check: func(r *Result, p *toolProbe) error {
				if n := p.runs("get_forecast"); n != 0 {
					return fmt.Errorf("%w: the forecast ran %d times with invalid arguments", ErrCheck, n)
				}
				return wantResults(r, `"invalid_arguments"`)
			},
		},
		{
			name: "S5_slow_tool", ask: "Can you look that up?", wait: 6 * time.Second,
			responses: func() []providertest.Response {
				return []providertest.Response{
					{Text: "Let me check that for you.", Calls: []providertest.ScriptedCall{{ID: "a", Name: "slow_lookup", Args: `{}`}}},
					{Text: "I found it."},
				}
			},
			check: func(r *Result, p *toolProbe) error {
				// The text before the tool plays while it runs, and the
				// filler follows it at 1.2 s.
				if !slices.Contains(saidTurn(r, 0), "moment,") {
					return fmt.Errorf("%w: no filler in the context: %q", ErrCheck, saidTurn(r, 0))
				}
				if _, f := p.record("slow_lookup"); len(f) != 1 {
					return fmt.Errorf("%w: the slow lookup did not finish", ErrCheck)
				} else if at, ok := r.FirstAudioAfter(r.Start); !ok || !at.Before(f[0]) {
					return fmt.Errorf("%w: nothing was spoken while the slow tool ran", ErrCheck)
				}
				return wantResults(r, "found")
			},
		},
		{
			name: "S6_tool_timeout", ask: "Is the system up?", wait: 5 * time.Second,
			responses: func() []providertest.Response {
				return []providertest.Response{
					{Calls: []providertest.ScriptedCall{{ID: "a", Name: "hanging_lookup", Args: `{}`}}},
					{Text: "The lookup did not answer in time."},
				}
			},
			check: func(r *Result, p *toolProbe) error {
				if s, _ := p.record("hanging_lookup"); len(s) != 1 {
					return fmt.Errorf("%w: the lookup started %d times", ErrCheck, len(s))
				}
				return wantResults(r, `"timeout"`)
			},
		},
	}
}
