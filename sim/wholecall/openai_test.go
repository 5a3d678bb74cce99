package wholecall_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/openai"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// openaiLines streams a scripted response in Chat Completions chunks:
// the text one word a chunk, then each call in two fragments (id and name
// on the first, the arguments cut at a rune boundary); interleaved, the
// calls' fragments alternate (all first halves, then all second halves),
// as a service streams parallel calls.
func openaiLines(r providertest.Response, interleave bool) []string {
	var out []string
	if r.Text != "" {
		for _, w := range strings.SplitAfter(r.Text, " ") {
			out = append(out, openaimock.TextChunk(w))
		}
	}
	first := make([]string, len(r.Calls))
	second := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		cut := len(c.Args) / 2
		for cut > 0 && !utf8.RuneStart(c.Args[cut]) {
			cut--
		}
		first[i] = openaimock.ToolChunk(openaimock.Frag{Index: i, ID: c.ID, Name: c.Name, Args: c.Args[:cut]})
		second[i] = openaimock.ToolChunk(openaimock.Frag{Index: i, Args: c.Args[cut:]})
	}
	if interleave {
		out = append(append(out, first...), second...)
	} else {
		for i := range first {
			out = append(out, first[i], second[i])
		}
	}
	reason := "stop"
	if len(r.Calls) > 0 {
		reason = "tool_calls"
	}
	return append(out, openaimock.FinishChunk(reason))
}

// overOpenAI makes the OpenAI adapter over its mock on an in-memory
// listener, answering rs in order.
func overOpenAI(rs []providertest.Response, interleave bool) (providers.LLM, func() int, func(), error) {
	script := make([]openaimock.Response, len(rs))
	for i, r := range rs {
		script[i] = openaimock.Response{Lines: openaiLines(r, interleave)}
	}
	return piped(openaimock.NewWithListener, func(url string, dial dialFunc) (*openai.Adapter, error) {
		return openai.New(openai.Config{BaseURL: url, Model: "mock-model", DialContext: dial})
	}, script...)
}

// TestToolSuiteOverOpenAI runs the tool scenarios S1-S6 through the whole
// pipeline with the OpenAI adapter on its wire format (plain and with the
// parallel calls' fragments interleaved), in virtual time, with the same
// exact checks as over the mock LLM: concurrency, result order, the number
// of requests, counters. (Mutation seen failing: the adapter's tool-call
// fragments all put at index 0 — the parallel calls merge into one.)
func TestToolSuiteOverOpenAI(t *testing.T) {
	for _, c := range sim.ToolCasesOver(overOpenAI) {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if out := sim.RunCase(c); !out.Passed {
					t.Fatalf("%s: %v", c.Name, out.Err)
				}
			})
		})
	}
}
