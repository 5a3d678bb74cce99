package webrtc

import (
	"bytes"
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/internal/logtest"
	"github.com/brisvox/brisvox/media/webrtc/webrtctest"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// testConfig is a server config for loopback tests: 127.0.0.1 only.
func testConfig() Config {
	return Config{
		IncludeLoopback: true,
		Interfaces:      []string{"lo"},
		NetworkTypes:    []string{"udp4"},
	}
}

// testServer is a Server behind an httptest server on 127.0.0.1 whose
// calls arrive on calls.
type testServer struct {
	srv   *Server
	http  *httptest.Server
	calls chan *Call
	base  string
	// logs holds every line the server wrote (debug and up, pion's too);
	// they are checked as strict JSON when the test ends.
	logs *logSink
}

// logSink is a concurrency-safe log buffer that pokes on every line.
type logSink struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{}
}

func newLogSink() *logSink { return &logSink{wake: make(chan struct{}, 1)} }

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func (s *logSink) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

// startServer starts a server for cfg (OnCall and Logger are set here)
// and registers with t.Cleanup its shutdown, the strict JSON check of
// every line it logged, and a goroutine leak check (last).
// Mutation caught by the log check (issue 14, defect 7): countEnd adding
// .Str("call_id", ...) to the call's logger, which has it already (every
// serving test fails with a duplicate key).
func startServer(t *testing.T, cfg Config, opts ...Option) *testServer {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	ts := &testServer{calls: make(chan *Call, 16), logs: newLogSink()}
	cfg.OnCall = func(c *Call) { ts.calls <- c }
	cfg.Logger = zerolog.New(ts.logs).Level(zerolog.DebugLevel)
	srv, err := New(cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts.srv = srv
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.http = &httptest.Server{Listener: l, Config: &http.Server{Handler: srv.Handler()}}
	ts.http.Start()
	ts.base = ts.http.URL
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("server Close: %v", err)
		}
		ts.http.Close()
		if err := logtest.Check(ts.logs.Bytes(), nil); err != nil {
			t.Errorf("the server's log does not parse as strict JSON: %v", err)
		}
	})
	return ts
}

// dialCall places a call with the test caller, waits until it is
// connected and reads its first 5 frames (media flows). The call and the
// caller are closed when the test ends, before startServer's checks.
func dialCall(t *testing.T, ctx context.Context, ts *testServer, opts webrtctest.Options) (*webrtctest.Caller, *Call) {
	t.Helper()
	cl, err := webrtctest.Dial(ctx, ts.base, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	c := ts.nextCall(t, ctx)
	t.Cleanup(func() { c.Close() })
	if err := cl.WaitConnected(ctx); err != nil {
		t.Fatalf("WaitConnected: %v", err)
	}
	readFrames(t, ctx, c, 5)
	return cl, c
}

// hearTone has the caller play d of 440 Hz and checks that the call's
// input hears it: at least 40 loud frames among twice d of frames read,
// dominant at 440 Hz.
func hearTone(t *testing.T, ctx context.Context, cl *webrtctest.Caller, c *Call, d time.Duration) {
	t.Helper()
	if err := cl.Play(tone(440, 16000, int(16000*d/time.Second), 8000), 16000); err != nil {
		t.Fatal(err)
	}
	in := loud(readFrames(t, ctx, c, int(2*d/messages.FrameDuration)), c.InputRate(), 1000)
	if len(in) < 40*c.InputRate()/50 {
		t.Fatalf("only %d loud samples of the 440 Hz input (want >= 40 frames)", len(in))
	}
	if hz := dominantHz(in, c.InputRate()); math.Abs(hz-440) > 10 {
		t.Fatalf("input dominant frequency %v Hz, want 440", hz)
	}
}

// nextCall waits for the server to hand over a call.
func (ts *testServer) nextCall(t *testing.T, ctx context.Context) *Call {
	t.Helper()
	select {
	case c := <-ts.calls:
		return c
	case <-ctx.Done():
		t.Fatal("no call handed over")
		return nil
	}
}

// tone makes n samples of a sine of hz at rate, amplitude amp.
func tone(hz float64, rate, n int, amp float64) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(amp * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
	}
	return out
}

// dominantHz is the frequency between 100 and 4000 Hz (10 Hz steps) with
// the most energy in pcm (Goertzel).
func dominantHz(pcm []int16, rate int) float64 {
	best, bestPow := 0.0, -1.0
	for f := 100.0; f <= 4000; f += 10 {
		coeff := 2 * math.Cos(2*math.Pi*f/float64(rate))
		var s1, s2 float64
		for _, x := range pcm {
			s0 := float64(x) + coeff*s1 - s2
			s2, s1 = s1, s0
		}
		if p := s1*s1 + s2*s2 - coeff*s1*s2; p > bestPow {
			best, bestPow = f, p
		}
	}
	return best
}

// rms of pcm.
func rms(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, x := range pcm {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// loud returns the samples of the 20 ms frames of pcm (at rate) whose rms
// is above thr.
func loud(pcm []int16, rate int, thr float64) []int16 {
	n := rate / 50
	var out []int16
	for i := 0; i+n <= len(pcm); i += n {
		if rms(pcm[i:i+n]) > thr {
			out = append(out, pcm[i:i+n]...)
		}
	}
	return out
}

// testCtx is a watchdog for a test that uses real sockets.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newFrame is an input frame of c's rate.
func newFrame(c *Call) *messages.AudioFrame {
	return &messages.AudioFrame{PCM: make([]int16, c.InputRate()/50)}
}
