package anthropic_test

import (
	"net/http"
	"testing"

	"github.com/brisvox/brisvox/providers/llm/anthropic"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/loosetest"
	"github.com/brisvox/brisvox/providers/llm/internal/ttfttest"
)

const (
	ttftKeyEnv = "BRISVOX_TTFT_ANTHROPIC_KEY"
	ttftKey    = "sk-bench"
)

// newTTFT starts the mock on real loopback TCP, answering every request at
// once (no pace, no stall: the first chunk is written and flushed as soon
// as the request is read) with text first; it warms the adapter and a bare
// client and returns both measurements. The bare client posts the body
// the adapter sent (as the mock parsed it) with the same headers.
func newTTFT(b *testing.B) (adapter ttfttest.Measure, bare *ttfttest.Bare) {
	b.Helper()
	b.Setenv(ttftKeyEnv, ttftKey)
	srv := m.New(m.Response{Lines: m.Text("Sure, tomorrow at eight.")})
	b.Cleanup(srv.Close)
	a, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: ttftKeyEnv})
	if err != nil {
		b.Fatal(err)
	}
	return ttfttest.Prepare(b, a, ttfttest.Request(loosetest.WeatherTool()), func() any { return srv.Requests()[0] }, &ttfttest.Bare{
		URL:    srv.URL() + "/v1/messages",
		Header: http.Header{"X-Api-Key": {ttftKey}, "Anthropic-Version": {anthropic.DefaultVersion}, "Content-Type": {"application/json"}, "Accept": {"text/event-stream"}},
		// message_start, content_block_start, then the first text delta.
		TextLine: 3,
	}, srv.URL()+"/v1/models")
}

// BenchmarkTimeToFirstToken: Stream up to the first LLMText over the mock
// on loopback TCP, warm connection (µs/first-token).
func BenchmarkTimeToFirstToken(b *testing.B) {
	adapter, _ := newTTFT(b)
	ttfttest.Run(b, adapter)
}

// BenchmarkTimeToFirstTokenBaseline: the same POST with a bare net/http
// client, read up to the first text's data line. The adapter's added cost
// is BenchmarkTimeToFirstToken minus this.
func BenchmarkTimeToFirstTokenBaseline(b *testing.B) {
	_, bare := newTTFT(b)
	ttfttest.Run(b, bare.Measure)
}

// BenchmarkTimeToFirstTokenAdded runs both in every iteration, so they see
// the same load, and reports the added time directly
// (added-µs/first-token; budget 1000).
func BenchmarkTimeToFirstTokenAdded(b *testing.B) {
	adapter, bare := newTTFT(b)
	ttfttest.RunPaired(b, adapter, bare.Measure)
}
