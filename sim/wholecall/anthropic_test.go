package wholecall_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/anthropic"
	"github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// anthropicLines streams a scripted response in Messages API events: a
// text block one word a delta, then each call as a tool_use block with
// its input in two deltas (cut at a rune boundary, so inside a JSON
// string); interleaved, the calls' blocks are all open at once and their
// deltas alternate (all first halves, then all second halves), the stops
// last.
func anthropicLines(r providertest.Response, interleave bool) []string {
	out := []string{anthropicmock.MessageStart(10)}
	block := 0
	if r.Text != "" {
		out = append(out, anthropicmock.TextStart(block))
		for _, w := range strings.SplitAfter(r.Text, " ") {
			if w != "" {
				out = append(out, anthropicmock.TextDelta(block, w))
			}
		}
		out = append(out, anthropicmock.BlockStop(block))
		block++
	}
	n := len(r.Calls)
	starts, first, second, stops := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, c := range r.Calls {
		cut := len(c.Args) / 2
		for cut > 0 && !utf8.RuneStart(c.Args[cut]) {
			cut--
		}
		b := block + i
		starts[i], first[i], second[i], stops[i] = anthropicmock.ToolStart(b, c.ID, c.Name), anthropicmock.InputDelta(b, c.Args[:cut]), anthropicmock.InputDelta(b, c.Args[cut:]), anthropicmock.BlockStop(b)
	}
	if interleave {
		for _, part := range [][]string{starts, first, second, stops} {
			out = append(out, part...)
		}
	} else {
		for i := range n {
			out = append(out, starts[i], first[i], second[i], stops[i])
		}
	}
	reason := "end_turn"
	if n > 0 {
		reason = "tool_use"
	}
	return append(out, anthropicmock.MessageDelta(reason, 5), anthropicmock.MessageStop())
}

// overAnthropic makes the Anthropic adapter over its mock on an in-memory
// listener, answering rs in order.
func overAnthropic(rs []providertest.Response, interleave bool) (providers.LLM, func() int, func(), error) {
	script := make([]anthropicmock.Response, len(rs))
	for i, r := range rs {
		script[i] = anthropicmock.Response{Lines: anthropicLines(r, interleave)}
	}
	return piped(anthropicmock.NewWithListener, func(url string, dial dialFunc) (*anthropic.Adapter, error) {
		return anthropic.New(anthropic.Config{BaseURL: url, Model: "mock-model", DialContext: dial})
	}, script...)
}

// TestToolSuiteOverAnthropic runs the tool scenarios S1-S6 through the whole
// pipeline with the Anthropic adapter on its wire format (plain and with the
// parallel calls' fragments interleaved), in virtual time, with the same
// exact checks as over the mock LLM: concurrency, result order, the number
// of requests, counters. (Mutation seen failing: every tool_use block given call index 0 — the
// parallel calls merge into one.)
func TestToolSuiteOverAnthropic(t *testing.T) {
	for _, c := range sim.ToolCasesOver(overAnthropic) {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if out := sim.RunCase(c); !out.Passed {
					t.Fatalf("%s: %v", c.Name, out.Err)
				}
			})
		})
	}
}
