package anthropic

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
)

// TestCancelStopsAtOnce cancels the caller's context while Recv waits on a
// stalled stream: Recv returns context.Canceled at once (no virtual time
// passes). Mutation seen failing: the request's context detached from the
// caller's (context.WithCancelCause(context.Background())): Recv waits
// for the idle deadline, 10s.
func TestCancelStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Lines: m.Text("one two three"), Stall: true, StallBefore: 3})
		llmtest.CancelStopsAtOnce(t, a, "one ")
	})
}

// TestTimeoutPhases: a stall before the headers, before the first event
// and mid-stream each end in a Timeout naming its phase, exactly at its
// deadline in virtual time. Mutation seen failing: the first-event phase
// armed with IdleTimeout (the first-event case ends at 3s, not 2s).
func TestTimeoutPhases(t *testing.T) {
	llmtest.TimeoutPhases(t, []llmtest.TimeoutCase{
		{Name: "headers", Resp: m.Response{StallHeaders: true}, Op: "response headers", At: time.Second},
		{Name: "first event", Resp: m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 0}, Op: "first event", At: 2 * time.Second},
		{Name: "event gap", Resp: m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 3}, Op: "event gap", At: 3 * time.Second},
	}, func(t *testing.T, resp m.Response) providers.LLM {
		a, _ := piped(t, func(cfg *Config) {
			cfg.ConnectTimeout, cfg.FirstEventTimeout, cfg.IdleTimeout = time.Second, 2*time.Second, 3*time.Second
		}, resp)
		return a
	})
}

// TestNoGoroutineLeak runs streams read whole and streams abandoned after
// one event; once the adapter is closed (the mock still up), no goroutine
// is left over the count before the first stream, and once the mock is
// closed too the bubble is empty (synctest.Test fails otherwise).
// Mutation seen failing: Close not releasing the response (the abandoned
// streams' connections and their reader goroutines stay).
func TestNoGoroutineLeak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil)
		llmtest.NoGoroutineLeak(t, a, srv, m.Response{Lines: m.Text("a b c d e f"), Pace: 10 * time.Millisecond})
	})
}

// TestLoopback runs the adapter on a real loopback socket: Warm, a
// stream, a refusal. Skipped under -short, like every real-socket test.
// Mutation seen failing: the messages path without /v1 (a 404 Rejected).
func TestLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	srv := m.New(m.Response{Lines: m.Text("hello there")}, m.Response{Status: 429, ErrorBody: m.ErrorBody("rate_limit_error", "slow down")})
	t.Cleanup(srv.Close)
	t.Setenv(testKeyEnv, testKey)
	a := llmtest.Open(t, New, Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv}, nil)
	llmtest.WarmThenRefused(t, a, "hello there")
}
