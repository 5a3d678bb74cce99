package gemini

import (
	"bytes"
	"context"
	"errors"
	"github.com/brisvox/brisvox/internal/goroutines"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/gemini/geminimock"
)

// TestCancelStopsAtOnce cancels the caller's context while Recv waits on a
// stalled stream: Recv returns context.Canceled at once. Mutation seen
// failing: the request's context detached from the caller's
// (context.WithCancelCause(context.Background())): Recv waits for the idle
// deadline.
func TestCancelStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, nil, m.Response{Lines: m.Text("one two three"), Stall: true, StallBefore: 1})
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

// TestTimeoutPhases: a stall before the headers, before the first chunk,
// mid-stream and before the body's end each end in a Timeout naming its
// phase, exactly at its deadline in virtual time. Mutation seen failing:
// the first-event phase armed with IdleTimeout (the first-event case ends
// at 3s, not 2s).
func TestTimeoutPhases(t *testing.T) {
	cases := []struct {
		name string
		resp m.Response
		op   string
		at   time.Duration
	}{
		{"headers", m.Response{StallHeaders: true}, "response headers", time.Second},
		{"first event", m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 0}, "first event", 2 * time.Second},
		{"event gap", m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 1}, "event gap", 3 * time.Second},
		{"body end", m.Response{Lines: m.Text("a b"), Stall: true, StallBefore: 3}, "event gap", 3 * time.Second},
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
// one event; once the adapter is closed, no goroutine is left over the
// count before the first stream, and once the mock is closed too the
// bubble is empty (synctest.Test fails otherwise). Mutation seen failing:
// Close not releasing the response.
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

// TestWarmReusesConnection: Warm's GET of the model list leaves the one
// connection that the next Stream uses. Mutation seen failing: Warm not
// reading the body to its end (a second connection).
func TestWarmReusesConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := piped(t, nil)
		if err := a.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := run(t, a, simpleReq()); err != nil {
			t.Fatal(err)
		}
		if srv.WarmHits() != 1 || srv.Conns() != 1 {
			t.Fatalf("warm hits %d, connections %d; want 1 and 1", srv.WarmHits(), srv.Conns())
		}
	})
}

// TestIdleTimerResets streams chunks at a steady pace shorter than the
// idle deadline, for far longer than it: no Timeout. Mutation seen
// failing: the timer armed once for the first event only.
func TestIdleTimerResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, _ := piped(t, func(c *Config) { c.IdleTimeout, c.FirstEventTimeout = time.Second, time.Second },
			m.Response{Lines: m.Text(strings.Repeat("w ", 40)), Pace: 600 * time.Millisecond})
		if _, err := run(t, a, simpleReq()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLoopback runs the adapter on a real loopback socket: Warm, a
// stream, a refusal. Skipped under -short. Mutation seen failing: the
// path without ?alt=sse (the mock answers 404: a Rejected).
func TestLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	srv := m.New(m.Response{Lines: m.Text("hello there")}, m.Response{Status: 429, ErrorBody: m.ErrorBody(429, "RESOURCE_EXHAUSTED", "slow down")})
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

// memStream is a stream over an in-memory body: the parser and decoder
// without a socket.
func memStream(body io.Reader, max int) *stream {
	s := &stream{}
	s.dec.init()
	cfg := Config{FirstEventTimeout: time.Hour, IdleTimeout: time.Hour, MaxLineBytes: max}
	s.Over(context.Background(), io.NopCloser(body), &s.dec, streamConfig(&cfg))
	return s
}

// sseBody frames chunks as the service does: data: line, CRLF, blank line.
func sseBody(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("data: " + l + "\r\n\r\n")
	}
	return b.String()
}

// TestSSEFraming: CRLF, comments and a multi-line data field are read as
// the SSE format says; the body's end ends the stream after a
// finishReason. Mutation seen failing: not trimming the CR of CRLF (the
// blank line "\r" no longer ends an event: the chunks run together).
func TestSSEFraming(t *testing.T) {
	body := ": keep-alive\r\n\r\n" + sseBody(m.TextChunk("a")) +
		"data: {\"candidates\":[{\"content\":\r\ndata: {\"parts\":[{\"text\":\"b\"}]}}]}\r\n\r\n" +
		sseBody(m.Finish("STOP", 2, 2, 0))
	s := memStream(strings.NewReader(body), 1024)
	evs, err := collect(t, s)
	if err != nil || len(evs) != 4 || evs[0].Text != "a" || evs[1].Text != "b" || evs[2].Kind != providers.LLMUsage || evs[3].Kind != providers.LLMDone {
		t.Fatalf("events %+v, err %v", evs, err)
	}
}

// TestSignatureBound: text-part signatures past maxSignatureBytes are a
// Protocol, not a growing buffer. Mutation seen failing: keepSig never
// refusing (the stream ends cleanly).
func TestSignatureBound(t *testing.T) {
	sig := strings.Repeat("s", 60000)
	var lines []string
	for range maxSignatureBytes/len(sig) + 1 {
		lines = append(lines, m.Chunk(m.Part{Text: "", Signature: sig}))
	}
	lines = append(lines, m.Finish("STOP", 1, 1, 0))
	s := memStream(strings.NewReader(sseBody(lines...)), DefaultMaxLineBytes)
	if _, err := collect(t, s); !errors.Is(err, providers.ErrProtocol) {
		t.Fatalf("error %v, want a Protocol", err)
	}
}

// FuzzDecode feeds arbitrary chunk data to the decoder: it never panics,
// and every failure is a Protocol or a Rejected.
func FuzzDecode(f *testing.F) {
	for _, s := range append(m.Text("a b"), m.Chunk(m.Part{ID: "x", Name: "f", Args: `{"a":1}`, Signature: "s"}),
		m.Chunk(m.Part{Text: "t", Thought: true}), m.ErrorBody(500, "INTERNAL", "x"), `{"candidates":[]}`, `[]`, `null`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":"x"}}]}}]}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		d.init()
		for _, part := range bytes.Split(data, []byte("\n")) {
			d.events = d.events[:0]
			if err := d.decode(part); err != nil {
				var p *providers.Protocol
				var r *providers.Rejected
				if !errors.As(err, &p) && !errors.As(err, &r) {
					t.Fatalf("error %v (%T)", err, err)
				}
				return
			}
			for _, ev := range d.events {
				if ev.Kind == providers.LLMToolCall && (ev.Name == "" || ev.ID == "" || !strings.HasPrefix(ev.Args, "{")) {
					t.Fatalf("call event %+v", ev)
				}
			}
		}
		d.finish()
	})
}

// FuzzSSE feeds any body to the parser and decoder: they never panic and
// end with io.EOF, a Protocol, a Rejected or a Disconnected.
func FuzzSSE(f *testing.F) {
	f.Add([]byte(sseBody(m.Text("hi there")...)))
	f.Add([]byte(sseBody(m.Chunk(m.Part{Name: "n", Args: `{"a":2}`}), m.Finish("MAX_TOKENS", 1, 1, 0))))
	f.Add([]byte(sseBody(m.ErrorBody(503, "UNAVAILABLE", "x"))))
	f.Add([]byte("data: " + strings.Repeat("z", 600) + "\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		const max = 512
		s := memStream(bytes.NewReader(body), max)
		defer s.Close()
		for range len(body) + 2 {
			_, err := s.Recv()
			if err == nil {
				continue
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, providers.ErrProtocol) &&
				!errors.Is(err, providers.ErrRejected) && !errors.Is(err, providers.ErrDisconnected) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		t.Fatal("stream did not end")
	})
}

// textBody is n text chunks as the service sends them, without the end.
func textBody(n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString(sseBody(m.TextChunk("word ")))
	}
	return b.Bytes()
}

// TestChunkAllocs pins the cost of one streamed text chunk through the
// SSE reader, the decoder and Recv: one allocation, the text's string
// (issue 5's goal; encoding/json spent 14). Skipped under -race.
// Mutations seen failing: the chunk's data cloned before decoding (2);
// the decoder's events slice not reused (2).
func TestChunkAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	const n = 200
	s := memStream(bytes.NewReader(textBody(n+10)), DefaultMaxLineBytes)
	defer s.Close()
	for range 5 { // warm the buffers
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(n, func() {
		if ev, err := s.Recv(); err != nil || ev.Text != "word " {
			t.Fatalf("%+v %v", ev, err)
		}
	})
	if allocs != 1 {
		t.Fatalf("%.1f allocations per chunk, want 1 (the text)", allocs)
	}
}

// BenchmarkChunk measures the adapter's cost per streamed text chunk:
// reading the lines, decoding the chunk, making the LLMText. Issue 5's
// goal is under 2 µs and 1 allocation (the text); on encoding/json it
// was 4.7-9.6 µs and 14 allocations.
func BenchmarkChunk(b *testing.B) {
	body := textBody(1024)
	b.ReportAllocs()
	rd := bytes.NewReader(body)
	s := memStream(rd, DefaultMaxLineBytes)
	defer s.Close()
	left := 0
	for b.Loop() {
		if left == 0 {
			b.StopTimer()
			rd.Reset(body) // the stream's reader has buffered nothing past the last chunk
			s.dec.init()
			left = 1024
			b.StartTimer()
		}
		if _, err := s.Recv(); err != nil {
			b.Fatal(err)
		}
		left--
	}
}
