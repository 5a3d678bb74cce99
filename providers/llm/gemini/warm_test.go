package gemini

import (
	"strings"
	"testing"
	"testing/synctest"
)

// TestWarmRequest: the request probe is one user turn with
// maxOutputTokens 1, streamed and read to its finishReason; the probe
// names hold no host and no query.
// Mutation seen failing: ProbeBody encoding with the configured
// MaxTokens (maxOutputTokens 300).
func TestWarmRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, func(c *Config) { c.MaxTokens = 300 })
		if err := a.WarmRequest(t.Context()); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || srv.WarmHits() != 0 {
			t.Fatalf("%d requests, %d warm hits", len(reqs), srv.WarmHits())
		}
		r := reqs[0]
		gen, _ := r["generationConfig"].(map[string]any)
		contents, _ := r["contents"].([]any)
		if gen["maxOutputTokens"] != 1.0 || len(contents) != 1 {
			t.Fatalf("probe %v", r)
		}
		w, q := a.WarmProbes()
		if w != "GET /v1beta/models" || q != "POST /v1beta/models/mock-model:streamGenerateContent" || strings.Contains(w+q, "127.0.0.1") {
			t.Errorf("probes %q %q", w, q)
		}
	})
}
