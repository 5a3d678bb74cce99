package gemini_test

import (
	"context"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/gemini"
	m "github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/internal/loosetest"
)

// liveBudget bounds a whole live run (four steps, five requests).
const liveBudget = 5 * time.Minute

// TestLive holds the Gemini API to the loose assertions. It is skipped,
// with a message, unless BRISVOX_LIVE_TESTS=1 and GEMINI_API_KEY is set.
// The model comes from BRISVOX_GEMINI_MODEL. Only counts are logged.
func TestLive(t *testing.T) {
	loosetest.Gate(t, gemini.DefaultAPIKeyEnv)
	cfg := gemini.Gemini(loosetest.EnvOr("BRISVOX_GEMINI_MODEL", "gemini-2.5-flash"))
	cfg.FirstEventTimeout = 30 * time.Second
	// Room for thinking: a thinking model's thoughts count against
	// maxOutputTokens, and a cut answer may carry no text.
	cfg.MaxTokens = 4096
	a, err := gemini.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(t.Context(), liveBudget)
	defer cancel()
	rep, err := loosetest.Run(ctx, a, loosetest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	loosetest.Check(t, rep)
}

// looseScript answers a loose run as a model would, in the order of its
// requests: the plain answer; two parallel calls in one chunk, the first
// with a thought signature; the answer after the results; a long answer
// that stalls after its first chunk (the cancel step). broken breaks one
// of them.
func looseScript(broken string) []m.Response {
	text := m.Response{Lines: m.Text("The sky is blue.")}
	calls := m.Chunk(
		m.Part{Name: "get_weather", Args: `{"city":"Paris"}`, Signature: "c2lnLWE="},
		m.Part{Name: "get_weather", Args: `{"city":"Tokyo"}`},
	)
	if broken == "args not JSON" {
		// Chunk cannot encode it: written by hand.
		calls = `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":Paris}}}]},"index":0}]}`
	}
	tools := m.Response{Lines: []string{calls, m.Finish("STOP", 40, 20, 0)}}
	follow := m.Response{Lines: m.Text("Cloudy in Paris and Tokyo.")}
	long := m.Response{Lines: m.Text("one two three"), Stall: true, StallBefore: 1}
	switch broken {
	case loosetest.BrokenNoEnd:
		text.Lines = text.Lines[:len(text.Lines)-1] // no finishReason
	case loosetest.BrokenFollowUp:
		follow.Lines = []string{m.Finish("STOP", 60, 1, 0)}
	}
	return []m.Response{text, tools, follow, long}
}

// TestLooseOverMock runs the live test's loose assertions against the
// mock, in virtual time: a plausible script passes, and a broken one
// fails the step it breaks, so the assertions are checked on every run.
// (Arguments that are not JSON cannot reach the assembler here: the chunk
// itself is malformed, a Protocol error.)
// Mutation caught (seen failing): the adapter giving every call index 0
// (the parallel calls merge and the assembler refuses them).
func TestLooseOverMock(t *testing.T) {
	cases := loosetest.MockCases()
	cases[2].Want = loosetest.ErrStream // arguments are an object on this wire: bad JSON is a malformed chunk
	var srv *m.Server
	loosetest.OverMock(t, cases, func(t *testing.T, broken string) providers.LLM {
		var dial llmtest.DialFunc
		srv, dial = llmtest.Piped(t, m.NewWithListener, looseScript(broken)...)
		return llmtest.Open(t, gemini.New, gemini.Config{BaseURL: srv.URL(), Model: "mock-model", DialContext: dial}, nil)
	}, func(t *testing.T, _ loosetest.Report) {
		reqs := srv.Requests()
		if len(reqs) != 4 {
			t.Fatalf("%d requests, want 4", len(reqs))
		}
		if n := countParts(reqs[2], "functionResponse"); n != 2 {
			t.Fatalf("the follow-up carries %d function responses, want 2", n)
		}
		if n := countParts(reqs[2], "thoughtSignature"); n != 1 {
			t.Fatalf("the follow-up carries %d thought signatures, want the 1 received", n)
		}
	})
}

// countParts counts the parts holding the field key in a parsed request.
func countParts(req map[string]any, key string) int {
	contents, _ := req["contents"].([]any)
	n := 0
	for _, x := range contents {
		c, _ := x.(map[string]any)
		parts, _ := c["parts"].([]any)
		for _, p := range parts {
			if pm, ok := p.(map[string]any); ok && pm[key] != nil {
				n++
			}
		}
	}
	return n
}
