package gemini_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/gemini"
	m "github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// splitWords cuts s into words, each with the space after it.
func splitWords(s string) []string {
	var out []string
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// toolSuiteLines streams a scripted response as Gemini chunks: the text
// one word a chunk, then the calls each in a chunk of its own (plain) or
// all in one chunk, the parallel calls side by side as the service sends
// them (interleaved), then the finishReason chunk.
func toolSuiteLines(r providertest.Response, together bool) []string {
	var out []string
	for _, w := range splitWords(r.Text) {
		out = append(out, m.TextChunk(w))
	}
	parts := make([]m.Part, len(r.Calls))
	for i, c := range r.Calls {
		parts[i] = m.Part{ID: c.ID, Name: c.Name, Args: c.Args}
	}
	if together && len(parts) > 0 {
		out = append(out, m.Chunk(parts...))
	} else {
		for _, p := range parts {
			out = append(out, m.Chunk(p))
		}
	}
	return append(out, m.Finish("STOP", 10, 5, 0))
}

// overGemini makes the Gemini adapter over its mock on an in-memory
// listener, answering rs in order.
func overGemini(rs []providertest.Response, together bool) (providers.LLM, func() int, func(), error) {
	script := make([]m.Response, len(rs))
	for i, r := range rs {
		script[i] = m.Response{Lines: toolSuiteLines(r, together)}
	}
	return llmtest.PipedLLM(m.NewWithListener, func(url string, dial llmtest.DialFunc) (*gemini.Adapter, error) {
		return gemini.New(gemini.Config{BaseURL: url, Model: "mock-model", DialContext: dial})
	}, script...)
}

// TestToolSuiteOverGemini runs the tool scenarios S1-S6 through the whole
// pipeline with the Gemini adapter on its wire format (calls in chunks of
// their own, and the parallel calls in one chunk), in virtual time, with
// the same exact checks as over the mock LLM. Mutation seen failing: the
// call counter not advanced (every call Index 0: the parallel calls merge
// into one).
func TestToolSuiteOverGemini(t *testing.T) {
	for _, c := range sim.ToolCasesOver(overGemini) {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if out := sim.RunCase(c); !out.Passed {
					t.Fatalf("%s: %v", c.Name, out.Err)
				}
			})
		})
	}
}
