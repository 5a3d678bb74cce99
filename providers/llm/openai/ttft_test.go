package openai_test

import (
	"net/http"
	"testing"

	"github.com/brisvox/brisvox/providers/llm/internal/loosetest"
	"github.com/brisvox/brisvox/providers/llm/internal/ttfttest"
	"github.com/brisvox/brisvox/providers/llm/openai"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

const (
	ttftKeyEnv = "BRISVOX_TTFT_OPENAI_KEY"
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
	srv := m.New(m.Response{Lines: []string{m.TextChunk("Sure"), m.TextChunk(", tomorrow at eight."), m.FinishChunk("stop"), m.UsageChunk(60, 8, 0)}})
	b.Cleanup(srv.Close)
	a, err := openai.New(openai.Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: ttftKeyEnv})
	if err != nil {
		b.Fatal(err)
	}
	return ttfttest.Prepare(b, a, ttfttest.Request(loosetest.WeatherTool()), func() any { return srv.Requests()[0] }, &ttfttest.Bare{
		URL:    srv.URL() + "/chat/completions",
		Header: http.Header{"Authorization": {"Bearer " + ttftKey}, "Content-Type": {"application/json"}, "Accept": {"text/event-stream"}},
		// The first data line is the first text chunk.
		TextLine: 1,
	}, srv.URL()+"/models")
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
