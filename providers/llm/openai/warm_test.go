package openai

import (
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

// TestWarmRequest: the request probe is one user message with the answer
// capped at one token under the name the config asks for, streamed, read
// to [DONE]; it touches neither the model list nor the configured cap.
// Mutation seen failing: ProbeBody encoding with the configured
// MaxTokens (max_tokens 300, max_completion_tokens 300).
func TestWarmRequest(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Config)
		capName string
	}{
		{"max_tokens", func(c *Config) { c.MaxTokens = 300 }, "max_tokens"},
		{"max_completion_tokens", func(c *Config) { c.MaxTokens, c.MaxCompletionTokens = 300, true }, "max_completion_tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, dial := llmtest.Piped(t, openaimock.NewWithListener, openaimock.Response{Lines: []string{openaimock.TextChunk("H")}})
				t.Setenv(testKeyEnv, testKey)
				a := llmtest.Open(t, New, Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv, DialContext: dial}, c.mutate)
				if err := a.WarmRequest(t.Context()); err != nil {
					t.Fatal(err)
				}
				reqs := srv.Requests()
				if len(reqs) != 1 || srv.WarmHits() != 0 || srv.Events() != 2 {
					t.Fatalf("%d requests, %d warm hits, %d events", len(reqs), srv.WarmHits(), srv.Events())
				}
				r := reqs[0]
				msgs, _ := r["messages"].([]any)
				if r[c.capName] != 1.0 || r["stream"] != true || len(msgs) != 1 {
					t.Errorf("probe %v", r)
				}
				if m, _ := msgs[0].(map[string]any); m["role"] != "user" || m["content"] != httpllm.ProbeText {
					t.Errorf("probe message %v", msgs[0])
				}
				if w, q := a.WarmProbes(); w != "GET /models" || q != "POST /chat/completions" {
					t.Errorf("probes %q %q", w, q)
				}
			})
		})
	}
}
