package anthropic

import (
	"context"
	"errors"
	"github.com/brisvox/brisvox/internal/goroutines"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
)

// TestCancelStopsAtOnce cancels the caller's context while Recv waits on a
// stalled stream: Recv returns context.Canceled at once (no virtual time
// passes). Mutation seen failing: the request's context detached from the
// caller's (context.WithCancelCause(context.Background())): Recv waits
// for the idle deadline, 10s.
func TestCancelStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Lines: m.Text("one two three"), Stall: true, StallBefore: 3})
		ctx, cancel := context.WithCancel(t.Context())
		s, err := a.Stream(ctx, simpleReq())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if ev, err := s.Recv(); err != nil || ev.Text != "one " {
			t.Fatalf("%+v %v", ev, err)
		}
		start := time.Now()
		go func() {
			time.Sleep(100 * time.Millisecond)
			cancel()
		}()
		_, err = s.Recv()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Fatalf("Recv returned %v after the wait began, want 100ms", d)
		}
	})
}

// TestTimeoutPhases: a stall before the headers, before the first event
// and mid-stream each end in a Timeout naming its phase, exactly at its
// deadline in virtual time. Mutation seen failing: the first-event phase
// armed with IdleTimeout (the first-event case ends at 3s, not 2s).
func TestTimeoutPhases(t *testing.T) {
	cases := []struct {
		name string
		resp m.Response
		op   string
		at   time.Duration
	}{
		{"headers", m.Response{StallHeaders: true}, "response headers", time.Second},
		{"first event", m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 0}, "first event", 2 * time.Second},
		{"event gap", m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 3}, "event gap", 3 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, _ := piped(t, func(cfg *Config) {
					cfg.ConnectTimeout, cfg.FirstEventTimeout, cfg.IdleTimeout = time.Second, 2*time.Second, 3*time.Second
				}, c.resp)
				start := time.Now()
				s, err := a.Stream(t.Context(), simpleReq())
				if err == nil {
					defer s.Close()
					for err == nil {
						start = time.Now()
						_, err = s.Recv()
					}
				}
				var to *providers.Timeout
				if !errors.As(err, &to) || to.Op != c.op {
					t.Fatalf("error %v, want Timeout %q", err, c.op)
				}
				if d := time.Since(start); d != c.at {
					t.Fatalf("timed out after %v, want %v", d, c.at)
				}
			})
		})
	}
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
		srv.SetSource(func() m.Response { return m.Response{Lines: m.Text("a b c d e f"), Pace: 10 * time.Millisecond} })
		synctest.Wait()
		before := goroutines.Count()
		for i := range 12 {
			s, err := a.Stream(t.Context(), simpleReq())
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 {
				if _, err := collect(t, s); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := s.Recv(); err != nil {
				t.Fatal(err)
			}
			_ = s.Close()
		}
		_ = a.Close()
		time.Sleep(time.Second) // virtual: the paced handlers finish
		synctest.Wait()
		if n := goroutines.Count(); n > before {
			t.Fatalf("%d goroutines after the streams, %d before", n, before)
		}
		srv.Close()
		synctest.Wait()
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
	defer srv.Close()
	t.Setenv(testKeyEnv, testKey)
	a, err := New(Config{BaseURL: srv.URL(), Model: "mock-model", APIKeyEnv: testKeyEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs, err := run(t, a, simpleReq())
	if err != nil {
		t.Fatal(err)
	}
	if r := assemble(t, evs); r.Text != "hello there" {
		t.Fatalf("text %q", r.Text)
	}
	var rej *providers.Rejected
	if _, err := run(t, a, simpleReq()); !errors.As(err, &rej) || rej.Status != 429 || !rej.Retryable() {
		t.Fatalf("error %v, want a retryable Rejected 429", err)
	}
}
