package webhook

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// memTransport answers in memory, inside the bubble: no socket. It
// records each request's (virtual) time and answers with answer(n).
type memTransport struct {
	mu     sync.Mutex
	times  []time.Time
	answer func(n int) (*http.Response, error)
}

func (m *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if err := Verify(testSecret, r.Header.Get(SignatureHeader), body, time.Now(), 0); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.times = append(m.times, time.Now())
	n := len(m.times)
	m.mu.Unlock()
	return m.answer(n)
}

func status(code int, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader("ANSWER-BODY"))}
}

// gaps runs one delivery that always fails (answer) until the Sender
// gives up, in virtual time, and returns the waits between attempts.
func gaps(t *testing.T, seed uint64, answer func(n int) (*http.Response, error)) ([]time.Duration, []Failure) {
	var out []time.Duration
	var failures []Failure
	synctest.Test(t, func(t *testing.T) {
		tr := &memTransport{answer: answer}
		s := newSender(t, Config{URLs: []string{"https://hooks.example/end"}, Secret: testSecret, Dir: t.TempDir(),
			Client: &http.Client{Transport: tr}}, WithSeed(seed))
		s.Start()
		if err := s.Deliver(testRecord("c1")); err != nil {
			t.Fatal(err)
		}
		for s.Stats()["pending"] > 0 {
			time.Sleep(time.Second) // virtual: the bubble's clock
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		for k := 1; k < len(tr.times); k++ {
			out = append(out, tr.times[k].Sub(tr.times[k-1]))
		}
		failures = s.Failures()
	})
	return out, failures
}

// TestBackoffVirtualTime: 12 attempts, the waits between them each
// between half and all of 1 s doubled per failure up to 5 minutes, the
// same for the same seed, then given up with the last status kept.
// Mutation seen caught: no jitter cap (d instead of min(d, max)) fails the
// 5-minute bound; jitter from the global source fails "same seed".
func TestBackoffVirtualTime(t *testing.T) {
	fail := func(int) (*http.Response, error) { return status(http.StatusServiceUnavailable), nil }
	got, failures := gaps(t, 7, fail)
	if len(got) != DefaultMaxAttempts-1 {
		t.Fatalf("%d waits, want %d", len(got), DefaultMaxAttempts-1)
	}
	for k, g := range got {
		d := min(BackoffMin<<k, BackoffMax)
		if g < d/2 || g > d {
			t.Errorf("wait %d: %s, want between %s and %s", k+1, g, d/2, d)
		}
	}
	again, _ := gaps(t, 7, fail)
	if !slices.Equal(got, again) {
		t.Errorf("same seed, other waits:\n%v\n%v", got, again)
	}
	other, _ := gaps(t, 8, fail)
	if slices.Equal(got, other) {
		t.Errorf("another seed, the same waits: %v", got)
	}
	if len(failures) != 1 || failures[0].Reason != "gave_up" || failures[0].Status != 503 ||
		failures[0].Attempts != DefaultMaxAttempts || failures[0].Host != "hooks.example" {
		t.Errorf("failures %+v", failures)
	}
	t.Logf("waits: %v", got)
}

// TestRetryAfterAndTimeouts: a 429's Retry-After lengthens the wait; a
// POST that never answers is cut at the Timeout and retried.
func TestRetryAfterAndTimeouts(t *testing.T) {
	got, _ := gaps(t, 1, func(n int) (*http.Response, error) {
		if n == 1 {
			return status(http.StatusTooManyRequests, "Retry-After", "120"), nil
		}
		return status(http.StatusOK), nil
	})
	if len(got) != 1 || got[0] != 120*time.Second {
		t.Errorf("waits %v, want [2m0s]", got)
	}
	synctest.Test(t, func(t *testing.T) {
		var calls []time.Time
		var mu sync.Mutex
		tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			calls = append(calls, time.Now())
			n := len(calls)
			mu.Unlock()
			if n == 1 {
				<-r.Context().Done() // hangs until the Timeout
				return nil, r.Context().Err()
			}
			return status(http.StatusOK), nil
		})
		s := newSender(t, Config{URLs: []string{"https://hooks.example/end"}, Secret: testSecret, Dir: t.TempDir(),
			Timeout: 3 * time.Second, Client: &http.Client{Transport: tr}}, WithSeed(1))
		s.Start()
		start := time.Now()
		if err := s.Deliver(testRecord("c1")); err != nil {
			t.Fatal(err)
		}
		for s.Stats()["delivered"] == 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		// 3 s of timeout, then a wait of 0.5 to 1 s.
		if wait := calls[1].Sub(start); wait < 3500*time.Millisecond || wait > 4*time.Second {
			t.Errorf("second attempt after %s, want 3.5-4 s", wait)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
