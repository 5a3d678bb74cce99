package wholecall_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/gemini"
	"github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// geminiWords cuts s into words, each with the space after it.
func geminiWords(s string) []string {
	var out []string
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// geminiLines streams a scripted response as Gemini chunks: the text
// one word a chunk, then the calls each in a chunk of its own (plain) or
// all in one chunk, the parallel calls side by side as the service sends
// them (interleaved), then the finishReason chunk.
func geminiLines(r providertest.Response, together bool) []string {
	var out []string
	for _, w := range geminiWords(r.Text) {
		out = append(out, geminimock.TextChunk(w))
	}
	parts := make([]geminimock.Part, len(r.Calls))
	for i, c := range r.Calls {
		parts[i] = geminimock.Part{ID: c.ID, Name: c.Name, Args: c.Args}
	}
	if together && len(parts) > 0 {
		out = append(out, geminimock.Chunk(parts...))
	} else {
		for _, p := range parts {
			out = append(out, geminimock.Chunk(p))
		}
	}
	return append(out, geminimock.Finish("STOP", 10, 5, 0))
}

// overGemini makes the Gemini adapter over its mock on an in-memory
// listener, answering rs in order.
func overGemini(rs []providertest.Response, together bool) (providers.LLM, func() int, func(), error) {
	script := make([]geminimock.Response, len(rs))
	for i, r := range rs {
		script[i] = geminimock.Response{Lines: geminiLines(r, together)}
	}
	return piped(geminimock.NewWithListener, func(url string, dial dialFunc) (*gemini.Adapter, error) {
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
