package httpllm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// TestTimeoutPhases: a stall before the headers, before the first event
// and between events each end in a Timeout naming its phase, exactly at
// its deadline in virtual time (1 s, 2 s, 3 s).
// Mutation seen failing: the first-event phase armed with IdleTimeout
// (the first-event case ends at 3s, not 2s).
func TestTimeoutPhases(t *testing.T) {
	cases := []struct {
		name string
		h    http.HandlerFunc
		op   string
		at   time.Duration
	}{
		{"headers", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // a done request body: the server then watches the connection
			<-r.Context().Done()
		}, "response headers", time.Second},
		{"first event", func(w http.ResponseWriter, r *http.Request) {
			eventStream(w, r, "", time.Hour, "")
		}, "first event", 2 * time.Second},
		{"event gap", func(w http.ResponseWriter, r *http.Request) {
			eventStream(w, r, sse("a"), time.Hour, "")
		}, "event gap", 3 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cl, _ := served(t, c.h)
				start := time.Now()
				s, err := openText(t.Context(), cl, &textDecoder{})
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

// TestIdleTimerResets: ten events 1.2 s apart (12 s in all) under a 3 s
// idle deadline complete.
// Mutation seen failing: the idle deadline not re-armed per event (a
// Timeout "event gap" at the second gap).
func TestIdleTimerResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl, _ := served(t, func(w http.ResponseWriter, r *http.Request) {
			eventStream(w, r, "", 0, "")
			for i := range 10 {
				select {
				case <-time.After(1200 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
				_, _ = fmt.Fprintf(w, "data: %d\n\n", i)
				w.(http.Flusher).Flush()
			}
			_, _ = io.WriteString(w, sse("done"))
		})
		s, err := openText(t.Context(), cl, &textDecoder{stop: "stop"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := drain(t, s)
		if err != nil || len(got) != 11 || got[10] != "<done:stop>" {
			t.Fatalf("events %q, err %v", got, err)
		}
	})
}

// TestCallerContext: the caller's cancellation stops a stalled Recv at
// once with context.Canceled, and its deadline is a Timeout that still
// matches context.DeadlineExceeded, both sticky.
// Mutation seen failing: the request derived from context.Background (the
// cancel case waits for the 3 s idle deadline and ends in its Timeout).
func TestCallerContext(t *testing.T) {
	cases := []struct {
		name  string
		end   func(cancel context.CancelFunc) // ends the caller's context 500 ms in
		check func(error) bool
	}{
		{"cancel", func(cancel context.CancelFunc) { cancel() }, func(err error) bool { return errors.Is(err, context.Canceled) }},
		{"deadline", nil, func(err error) bool {
			var to *providers.Timeout
			return errors.As(err, &to) && to.Op == "caller's deadline" && errors.Is(err, context.DeadlineExceeded)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cl, _ := served(t, func(w http.ResponseWriter, r *http.Request) {
					eventStream(w, r, sse("a"), time.Hour, "")
				})
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if c.end == nil {
					ctx, cancel = context.WithTimeout(t.Context(), 500*time.Millisecond)
					defer cancel()
				}
				s, err := openText(ctx, cl, &textDecoder{})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if ev, err := s.Recv(); err != nil || ev.Text != "a" {
					t.Fatalf("first event %+v %v", ev, err)
				}
				if c.end != nil {
					time.AfterFunc(500*time.Millisecond, func() { c.end(cancel) })
				}
				start := time.Now()
				_, err = s.Recv()
				if d := time.Since(start); d != 500*time.Millisecond || !c.check(err) {
					t.Fatalf("after %v: %v", d, err)
				}
				if _, err2 := s.Recv(); !c.check(err2) {
					t.Fatalf("second Recv: %v", err2)
				}
			})
		})
	}
}

// errRead is a read failure of a test body.
var errRead = errors.New("connection reset")

// TestStreamEnds: how each end of a body reaches the caller, through a
// test Decoder.
// Mutations seen failing: the Decode error's events kept ("dropped"
// returned); End called on a read error (the read-error case ends cleanly
// with "end"); the error not sticky (a second Recv reads on).
func TestStreamEnds(t *testing.T) {
	cases := []struct {
		name     string
		body     io.Reader
		complete bool
		want     []string
		check    func(error) bool // nil: a clean end
		ends     int              // End calls
	}{
		{"done", strings.NewReader(sse("a", "b", "done")), false, []string{"a", "b", "<done:why>"}, nil, 0},
		{"done, trailer ignored", strings.NewReader(sse("a", "done", "b")), false, []string{"a", "<done:why>"}, nil, 0},
		{"clean end completes", strings.NewReader(sse("a")), true, []string{"a", "end", "<done:why>"}, nil, 1},
		{"clean end is a cut", strings.NewReader(sse("a")), false, []string{"a"}, func(err error) bool {
			var d *providers.Disconnected
			return errors.As(err, &d) && strings.Contains(err.Error(), "stream ended early") && errors.Is(err, io.ErrUnexpectedEOF)
		}, 1},
		{"half an event", strings.NewReader(sse("a") + "data: b"), true, []string{"a", "end", "<done:why>"}, nil, 1},
		{"decode error", strings.NewReader(sse("a", "bad", "b")), false, []string{"a"}, func(err error) bool {
			return errors.Is(err, providers.ErrProtocol)
		}, 0},
		{"read error", io.MultiReader(strings.NewReader(sse("a")), iotest(errRead)), true, []string{"a"}, func(err error) bool {
			var d *providers.Disconnected
			return errors.As(err, &d) && errors.Is(err, errRead) && strings.Contains(err.Error(), testStreamConfig.CutDetail)
		}, 0},
		{"line too long", strings.NewReader("data: " + strings.Repeat("x", 2000) + "\n\n"), true, nil, func(err error) bool {
			return errors.Is(err, providers.ErrProtocol)
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dec := &textDecoder{complete: c.complete, stop: "why"}
			s := &Stream{}
			s.Over(context.Background(), io.NopCloser(c.body), dec, testStreamConfig)
			defer s.Close()
			got, err := drain(t, s)
			if !slices.Equal(got, c.want) {
				t.Errorf("events %q, want %q", got, c.want)
			}
			if c.check == nil && err != nil || c.check != nil && !c.check(err) {
				t.Fatalf("error %v", err)
			}
			if c.check != nil {
				if _, err2 := s.Recv(); err2 != err {
					t.Fatalf("second Recv %v, want the same %v", err2, err)
				}
			} else if _, err2 := s.Recv(); !errors.Is(err2, io.EOF) {
				t.Fatalf("after the end: %v, want io.EOF", err2)
			}
			if dec.ends != c.ends {
				t.Fatalf("End called %d times, want %d", dec.ends, c.ends)
			}
		})
	}
}

// iotest is a reader failing with err.
func iotest(err error) io.Reader { return errReader{err} }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestReleaseOnce: the body is closed once whatever ends the stream and
// however often Close is called; Recv after Close is ErrClosed.
// Mutation seen failing: release without its sync.Once (2 or 3 closes).
func TestReleaseOnce(t *testing.T) {
	cases := []struct {
		name string
		body string
		recv int // Recv calls before Close
	}{
		{"closed unread", sse("a", "done"), 0},
		{"closed mid-stream", sse("a", "b", "done"), 1},
		{"closed after the end", sse("a", "done"), 4},
		{"closed after an error", sse("bad"), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(c.body)}
			s := &Stream{}
			s.Over(context.Background(), body, &textDecoder{}, testStreamConfig)
			for range c.recv {
				_, _ = s.Recv()
			}
			for range 2 {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if n := body.closes.Load(); n != 1 {
				t.Fatalf("body closed %d times, want 1", n)
			}
			if _, err := s.Recv(); !errors.Is(err, providers.ErrClosed) {
				t.Fatalf("Recv after Close: %v, want ErrClosed", err)
			}
		})
	}
}

// TestDrainAfterDone: after the vendor's end, the rest of the body is
// read so the connection can be reused, but at most maxDrain bytes.
// Mutations seen failing: no drain (the short trailer is left unread); an
// unbounded drain (the long trailer is read whole).
func TestDrainAfterDone(t *testing.T) {
	const line = 1024 // testStreamConfig.MaxLineBytes: what the event reader buffers
	cases := []struct {
		name    string
		trailer int
		maxRead int
		whole   bool // the body is read to its end
	}{
		{"short trailer", 2 * line, 0, true},
		{"long trailer", 1 << 20, line + maxDrain, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			all := sse("a", "done") + strings.Repeat(":", c.trailer)
			body := &countingBody{r: strings.NewReader(all)}
			s := &Stream{}
			s.Over(context.Background(), body, &textDecoder{}, testStreamConfig)
			defer s.Close()
			if got, err := drain(t, s); err != nil || len(got) != 2 {
				t.Fatalf("events %q, err %v", got, err)
			}
			if c.whole && body.read != len(all) {
				t.Fatalf("read %d of %d bytes", body.read, len(all))
			}
			if c.maxRead > 0 && body.read > c.maxRead {
				t.Fatalf("read %d bytes, bound %d", body.read, c.maxRead)
			}
		})
	}
}

// constDecoder makes one constant LLMText per event: what the core spends
// per event, without a vendor's JSON.
type constDecoder struct{}

func (constDecoder) Decode(_ []byte, evs []providers.LLMEvent) ([]providers.LLMEvent, bool, error) {
	return append(evs, providers.LLMEvent{Kind: providers.LLMText, Text: "word "}), false, nil
}
func (constDecoder) End(evs []providers.LLMEvent) ([]providers.LLMEvent, error) { return evs, nil }
func (constDecoder) StopReason() string                                         { return "" }

// TestRecvAllocs pins the core's cost per event: none (the vendors'
// budgets are their JSON's).
// Mutation seen failing: the event queue not reused (s.events = nil before
// Decode: 1 allocation per event).
func TestRecvAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	const n = 200
	s := &Stream{}
	s.Over(context.Background(), io.NopCloser(strings.NewReader(strings.Repeat(sse("x"), n+10))), &constDecoder{}, testStreamConfig)
	defer s.Close()
	for range 5 {
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(n, func() {
		if ev, err := s.Recv(); err != nil || ev.Text != "word " {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per event, want 0", allocs)
	}
}

// BenchmarkRecv measures the core's cost per event: reading the lines,
// re-arming the idle deadline, queueing the event.
func BenchmarkRecv(b *testing.B) {
	body := []byte(strings.Repeat(sse(`{"choices":[{"index":0,"delta":{"content":"word "}}]}`), 1024))
	b.ReportAllocs()
	b.SetBytes(int64(len(body) / 1024))
	rd := bytes.NewReader(body)
	s := &Stream{}
	s.Over(context.Background(), io.NopCloser(rd), &constDecoder{}, testStreamConfig)
	defer s.Close()
	left := 1024
	for b.Loop() {
		if left == 0 {
			b.StopTimer()
			rd.Reset(body) // the event reader has buffered nothing past the last event
			left = 1024
			b.StartTimer()
		}
		if _, err := s.Recv(); err != nil {
			b.Fatal(err)
		}
		left--
	}
}
