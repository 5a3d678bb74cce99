package llmtest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// The checks below but TimeoutPhases (which makes a bubble per case) and
// WarmThenRefused (which needs none) run inside the caller's
// testing/synctest bubble, on an adapter over its mock that the caller
// has made and scripted: the times they compare are virtual, and exact.

// cancelAfter is how long CancelStopsAtOnce waits before it cancels.
const cancelAfter = 100 * time.Millisecond

// CancelStopsAtOnce streams SimpleRequest on p, reads the first event
// (whose text must be first), then cancels the caller's context 100 ms
// after the second Recv began to wait on the stalled stream: that Recv
// must return context.Canceled exactly then. p's mock must send first and
// then stall for longer than that.
func CancelStopsAtOnce(t testing.TB, p providers.LLM, first string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s, err := p.Stream(ctx, SimpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Recv(); err != nil || ev.Text != first {
		t.Fatalf("%+v %v", ev, err)
	}
	start := time.Now()
	go func() {
		time.Sleep(cancelAfter)
		cancel()
	}()
	_, err = s.Recv()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if d := time.Since(start); d != cancelAfter {
		t.Fatalf("Recv returned %v after the wait began, want %v", d, cancelAfter)
	}
}

// TimeoutCase is a stall of the mock and the Timeout it must end in: one
// naming Op, returned exactly At after the start of the call that failed
// (Stream, or the last Recv).
type TimeoutCase struct {
	Name string
	Resp llmmock.Response
	Op   string
	At   time.Duration
}

// TimeoutPhases runs each case in a testing/synctest bubble of its own
// (a subtest named after it): open makes the adapter over a mock
// answering the case's Resp, with the deadlines the cases' At values
// assume; then SimpleRequest is streamed and read until it fails.
func TimeoutPhases(t *testing.T, cases []TimeoutCase, open func(t *testing.T, resp llmmock.Response) providers.LLM) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				timesOutAt(t, open(t, c.Resp), c.Op, c.At)
			})
		})
	}
}

// timesOutAt is TimeoutPhases' check of one case.
func timesOutAt(t testing.TB, p providers.LLM, op string, at time.Duration) {
	t.Helper()
	start := time.Now()
	s, err := p.Stream(t.Context(), SimpleRequest())
	if err == nil {
		defer s.Close()
		for err == nil {
			start = time.Now()
			_, err = s.Recv()
		}
	}
	var to *providers.Timeout
	if !errors.As(err, &to) || to.Op != op {
		t.Fatalf("error %v, want Timeout %q", err, op)
	}
	if d := time.Since(start); d != at {
		t.Fatalf("timed out after %v, want %v", d, at)
	}
}

// leakStreams is how many streams NoGoroutineLeak runs.
const leakStreams = 12

// NoGoroutineLeak makes srv answer every stream with resp (several events,
// paced, so a dropped stream is dropped mid-response), then runs 12
// streams on a: the even ones read whole, the odd ones closed after one
// event. Once a is closed (srv still up) and the paced handlers have had
// a virtual second to finish, no goroutine of the bubble may be left over
// the count before the first stream; then srv is closed, and the bubble
// must end empty (synctest.Test fails otherwise).
func NoGoroutineLeak(t testing.TB, a Adapter, srv Mock, resp llmmock.Response) {
	t.Helper()
	srv.SetSource(func() llmmock.Response { return resp })
	synctest.Wait()
	before := leaktest.Count()
	for i := range leakStreams {
		s, err := a.Stream(t.Context(), SimpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := Collect(t, s); err != nil {
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
	if n := leaktest.Count(); n > before {
		t.Fatalf("%d goroutines after the streams, %d before", n, before)
	}
	srv.Close()
	synctest.Wait()
}

// WarmReusesConnection: Warm, then one stream read whole; srv must have
// answered one warm-up and accepted one connection, the warm-up's, which
// the stream reused.
func WarmReusesConnection(t testing.TB, p providers.LLM, srv Mock) {
	t.Helper()
	if err := p.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(t, p, SimpleRequest()); err != nil {
		t.Fatal(err)
	}
	if srv.WarmHits() != 1 || srv.Conns() != 1 {
		t.Fatalf("warm hits %d, connections %d; want 1 and 1", srv.WarmHits(), srv.Conns())
	}
}

// WarmThenRefused: Warm succeeds, a stream assembles to text, and the
// next stream is refused with a retryable Rejected 429. p's mock must
// answer so. It needs no bubble: the adapters' loopback tests, on real
// sockets, use it.
func WarmThenRefused(t testing.TB, p providers.LLM, text string) {
	t.Helper()
	if err := p.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs, err := Run(t, p, SimpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if r := Assemble(t, evs); r.Text != text {
		t.Fatalf("text %q", r.Text)
	}
	var rej *providers.Rejected
	if _, err := Run(t, p, SimpleRequest()); !errors.As(err, &rej) || rej.Status != 429 || !rej.Retryable() {
		t.Fatalf("error %v, want a retryable Rejected 429", err)
	}
}
