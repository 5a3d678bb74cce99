package openai_test

import (
	"context"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/internal/loosetest"
	"github.com/brisvox/brisvox/providers/llm/openai"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

// liveBudget bounds a whole live run (four steps, five requests).
const liveBudget = 5 * time.Minute

// TestLive holds the real services to the loose assertions: OpenAI,
// OpenRouter and Ollama through their presets. Each is skipped, with a
// message, unless BRISVOX_LIVE_TESTS=1 and its variable (the key, or
// OLLAMA_BASE_URL) is set. The model comes from BRISVOX_OPENAI_MODEL,
// BRISVOX_OPENROUTER_MODEL or BRISVOX_OLLAMA_MODEL. Only counts are
// logged.
func TestLive(t *testing.T) {
	cases := []struct {
		name  string
		gate  string
		cfg   func() openai.Config
		loose loosetest.Config
	}{
		{"openai", "OPENAI_API_KEY", func() openai.Config {
			return openai.OpenAI(loosetest.EnvOr("BRISVOX_OPENAI_MODEL", "gpt-4.1-mini"))
		}, loosetest.Config{}},
		{"openrouter", "OPENROUTER_API_KEY", func() openai.Config {
			return openai.OpenRouter(loosetest.EnvOr("BRISVOX_OPENROUTER_MODEL", "openai/gpt-4.1-mini"))
		}, loosetest.Config{}},
		// A local model may be loaded on the first request: more time.
		{"ollama", "OLLAMA_BASE_URL", func() openai.Config {
			c := openai.Ollama(loosetest.EnvOr("BRISVOX_OLLAMA_MODEL", "llama3.2"))
			c.FirstEventTimeout = 2 * time.Minute
			return c
		}, loosetest.Config{StepTimeout: 3 * time.Minute}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loosetest.Gate(t, c.gate)
			cfg := c.cfg()
			if cfg.FirstEventTimeout == 0 {
				cfg.FirstEventTimeout = 30 * time.Second
			}
			a, err := openai.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ctx, cancel := context.WithTimeout(t.Context(), liveBudget)
			defer cancel()
			rep, err := loosetest.Run(ctx, a, c.loose)
			if err != nil {
				t.Fatal(err)
			}
			loosetest.Check(t, rep)
		})
	}
}

// looseScript answers a loose run as a model would, in the order of its
// requests: the plain answer; two parallel calls, their fragments
// interleaved; the answer after the results; a long answer that stalls
// after its first chunk (the cancel step). broken breaks one of them.
func looseScript(broken string) []m.Response {
	text := m.Response{Lines: []string{m.TextChunk("The sky "), m.TextChunk("is blue."), m.FinishChunk("stop"), m.UsageChunk(12, 5, 0)}}
	parisArgs := `"Paris"}`
	if broken == "args not JSON" {
		parisArgs = `Paris}`
	}
	tools := m.Response{Lines: []string{
		m.ToolChunk(m.Frag{Index: 0, ID: "call_a", Name: "get_weather", Args: `{"city":`}),
		m.ToolChunk(m.Frag{Index: 1, ID: "call_b", Name: "get_weather", Args: `{"city":"Tok`}),
		m.ToolChunk(m.Frag{Index: 0, Args: parisArgs}),
		m.ToolChunk(m.Frag{Index: 1, Args: `yo"}`}),
		m.FinishChunk("tool_calls"),
		m.UsageChunk(40, 20, 0),
	}}
	follow := m.Response{Lines: []string{m.TextChunk("Cloudy in Paris "), m.TextChunk("and Tokyo."), m.FinishChunk("stop"), m.UsageChunk(60, 8, 0)}}
	long := m.Response{Lines: []string{m.TextChunk("one "), m.TextChunk("two "), m.FinishChunk("stop")}, Stall: true, StallBefore: 1}
	switch broken {
	case loosetest.BrokenNoEnd:
		text.Cut = true
	case loosetest.BrokenFollowUp:
		follow.Lines = []string{m.FinishChunk("stop")}
	}
	return []m.Response{text, tools, follow, long}
}

// TestLooseOverMock runs the live tests' loose assertions against the
// mock, in virtual time: a plausible script passes, and a broken one
// fails the step it breaks, so the assertions are checked on every run.
// Mutation caught (seen failing): the adapter giving every call fragment
// index 0 (the parallel calls merge and the assembler refuses them).
func TestLooseOverMock(t *testing.T) {
	cases := loosetest.MockCases()
	var srv *m.Server
	loosetest.OverMock(t, cases, func(t *testing.T, broken string) providers.LLM {
		var dial llmtest.DialFunc
		srv, dial = llmtest.Piped(t, m.NewWithListener, looseScript(broken)...)
		return llmtest.Open(t, openai.New, openai.Config{BaseURL: srv.URL(), Model: "mock-model", DialContext: dial}, nil)
	}, func(t *testing.T, _ loosetest.Report) {
		reqs := srv.Requests()
		if len(reqs) != 4 {
			t.Fatalf("%d requests, want 4", len(reqs))
		}
		if n := countRole(reqs[2], "tool"); n != 2 {
			t.Fatalf("the follow-up carries %d tool results, want 2", n)
		}
	})
}

// countRole counts the messages of role in a parsed chat request.
func countRole(req map[string]any, role string) int {
	msgs, _ := req["messages"].([]any)
	n := 0
	for _, x := range msgs {
		if mm, ok := x.(map[string]any); ok && mm["role"] == role {
			n++
		}
	}
	return n
}
