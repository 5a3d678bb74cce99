package openai_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/loose"
	"github.com/brisvox/brisvox/providers/llm/internal/ttft"
	"github.com/brisvox/brisvox/providers/llm/openai"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

const (
	ttftKeyEnv = "BRISVOX_TTFT_OPENAI_KEY"
	ttftKey    = "sk-bench"
)

// ttftRequest is a voice turn's request: a system prompt, a few turns,
// one tool.
func ttftRequest() *providers.Request {
	return &providers.Request{
		Messages: []agent.Message{
			agent.System("You are a friendly receptionist on a phone line. Answer in one or two short sentences."),
			agent.User("Hi, I would like to book a table for two."),
			agent.Assistant("Sure, for which day and time?", nil),
			agent.User("Tomorrow at eight, please."),
		},
		Tools: []providers.ToolDef{loose.WeatherTool()},
	}
}

// newTTFT starts the mock on real loopback TCP, answering every request at
// once (no pace, no stall: the first chunk is written and flushed as soon
// as the request is read) with text first; it warms the adapter and a bare
// client and returns both measurements. The bare client posts the body
// the adapter sent (as the mock parsed it) with the same headers.
func newTTFT(b *testing.B) (adapter ttft.Measure, bare *ttft.Bare) {
	b.Helper()
	b.Setenv(ttftKeyEnv, ttftKey)
	srv := m.New(m.Response{Lines: []string{m.TextChunk("Sure"), m.TextChunk(", tomorrow at eight."), m.FinishChunk("stop"), m.UsageChunk(60, 8, 0)}})
	b.Cleanup(srv.Close)
	a, err := openai.New(openai.Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: ttftKeyEnv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	if err := a.Warm(b.Context()); err != nil {
		b.Fatal(err)
	}
	adapter = ttft.Adapter(a, ttftRequest())
	if _, err := adapter(b.Context()); err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(srv.Requests()[0])
	if err != nil {
		b.Fatal(err)
	}
	bare = &ttft.Bare{
		Client: ttft.NewClient(),
		URL:    srv.URL() + "/chat/completions",
		Header: http.Header{"Authorization": {"Bearer " + ttftKey}, "Content-Type": {"application/json"}, "Accept": {"text/event-stream"}},
		Body:   body,
		// The first data line is the first text chunk.
		TextLine: 1,
	}
	b.Cleanup(bare.Client.CloseIdleConnections)
	if err := bare.Warm(b.Context(), srv.URL()+"/models"); err != nil {
		b.Fatal(err)
	}
	if _, err := bare.Measure(b.Context()); err != nil {
		b.Fatal(err)
	}
	return adapter, bare
}

// BenchmarkTimeToFirstToken: Stream up to the first LLMText over the mock
// on loopback TCP, warm connection (µs/first-token).
func BenchmarkTimeToFirstToken(b *testing.B) {
	adapter, _ := newTTFT(b)
	ttft.Run(b, adapter)
}

// BenchmarkTimeToFirstTokenBaseline: the same POST with a bare net/http
// client, read up to the first text's data line. The adapter's added cost
// is BenchmarkTimeToFirstToken minus this.
func BenchmarkTimeToFirstTokenBaseline(b *testing.B) {
	_, bare := newTTFT(b)
	ttft.Run(b, bare.Measure)
}

// BenchmarkTimeToFirstTokenAdded runs both in every iteration, so they see
// the same load, and reports the added time directly
// (added-µs/first-token; budget 1000).
func BenchmarkTimeToFirstTokenAdded(b *testing.B) {
	adapter, bare := newTTFT(b)
	ttft.RunPaired(b, adapter, bare.Measure)
}
