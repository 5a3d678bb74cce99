package anthropic

import (
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers/llm/internal/httpllm"
)

// TestWarmRequest: the request probe is one user message with max_tokens
// 1 and no thinking (the API refuses a thinking budget at or above
// max_tokens), streamed and read to message_stop.
// Mutation seen failing: the thinking budget kept in the probe.
func TestWarmRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, func(c *Config) { c.MaxTokens, c.ThinkingBudget = 4096, 2048 })
		if err := a.WarmRequest(t.Context()); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || srv.WarmHits() != 0 {
			t.Fatalf("%d requests, %d warm hits", len(reqs), srv.WarmHits())
		}
		r := reqs[0]
		msgs, _ := r["messages"].([]any)
		if r["max_tokens"] != 1.0 || r["thinking"] != nil || r["stream"] != true || len(msgs) != 1 {
			t.Fatalf("probe %v", r)
		}
		m, _ := msgs[0].(map[string]any)
		content, _ := m["content"].([]any)
		if m["role"] != "user" || len(content) != 1 || content[0].(map[string]any)["text"] != httpllm.ProbeText {
			t.Errorf("probe message %v", msgs[0])
		}
		if w, q := a.WarmProbes(); w != "GET /v1/models" || q != "POST /v1/messages" {
			t.Errorf("probes %q %q", w, q)
		}
	})
}
