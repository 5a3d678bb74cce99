package providertest

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/providers"
)

// ms keeps the timetables of the tests short.
const ms = time.Millisecond

// stamped is an event and when it arrived, as an offset from the test's
// start.
type stamped[E any] struct {
	at time.Duration
	ev E
}

// recorder reads a session's events until the channel closes.
type recorder[E any] struct {
	mu     sync.Mutex
	got    []stamped[E]
	closed chan struct{}
}

// record starts reading ch; the reader ends when ch closes, so a test
// must end the session (Close, context) before its bubble ends.
func record[E any](t0 time.Time, ch <-chan E) *recorder[E] {
	r := &recorder[E]{closed: make(chan struct{})}
	go func() {
		defer close(r.closed)
		for ev := range ch {
			r.mu.Lock()
			r.got = append(r.got, stamped[E]{at: time.Since(t0), ev: ev})
			r.mu.Unlock()
		}
	}()
	return r
}

// events returns what arrived so far.
func (r *recorder[E]) events() []stamped[E] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]stamped[E](nil), r.got...)
}

// wait waits for the channel to close and returns everything.
func (r *recorder[E]) wait() []stamped[E] {
	<-r.closed
	return r.events()
}

func TestFaultKindString(t *testing.T) {
	tests := []struct {
		kind FaultKind
		want string
	}{
		{FaultDisconnect, "disconnect"},
		{FaultStall, "stall"},
		{FaultReject, "reject"},
		{FaultProtocol, "protocol"},
		{FaultDelay, "delay"},
		{FaultConnectStall, "connect-stall"},
		{0, "FaultKind(0)"},
	}
	for _, tc := range tests {
		if got := tc.kind.String(); got != tc.want {
			t.Errorf("%d.String() = %q, want %q", int(tc.kind), got, tc.want)
		}
	}
}

func TestSessionFaultSchedule(t *testing.T) {
	base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	due := func(n int) time.Time { return base.Add(time.Duration(n) * 100 * ms) }
	type slot struct {
		at      time.Duration
		forever bool
		fail    bool
	}
	tests := []struct {
		name  string
		fault Fault
		want  []slot // events 0..3, due at 0, 100, 200, 300 ms
	}{
		{name: "no fault", want: []slot{{at: 0}, {at: 100 * ms}, {at: 200 * ms}, {at: 300 * ms}}},
		{
			name:  "delay shifts the event and the rest",
			fault: Fault{Kind: FaultDelay, BeforeEvent: 1, Duration: 50 * ms},
			want:  []slot{{at: 0}, {at: 150 * ms}, {at: 250 * ms}, {at: 350 * ms}},
		},
		{
			// Mutation: a stall that shifts like a delay gives 350, 450.
			name:  "stall holds back what falls due meanwhile",
			fault: Fault{Kind: FaultStall, BeforeEvent: 1, Duration: 150 * ms},
			want:  []slot{{at: 0}, {at: 250 * ms}, {at: 250 * ms}, {at: 300 * ms}},
		},
		{
			name:  "stall forever",
			fault: Fault{Kind: FaultStall, BeforeEvent: 2},
			want:  []slot{{at: 0}, {at: 100 * ms}, {at: 200 * ms, forever: true}, {at: 300 * ms, forever: true}},
		},
		{
			name:  "disconnect fails at the event's due time",
			fault: Fault{Kind: FaultDisconnect, BeforeEvent: 2},
			want:  []slot{{at: 0}, {at: 100 * ms}, {at: 200 * ms, fail: true}, {at: 300 * ms}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sf := sessionFault{f: tc.fault}
			for n, w := range tc.want {
				at, forever, fail := sf.schedule(n, due(n))
				got := slot{at: at.Sub(base), forever: forever, fail: fail != nil}
				if got != w {
					t.Errorf("event %d: %+v, want %+v", n, got, w)
				}
			}
		})
	}
}

// TestMocksLeaveNoGoroutines runs each mock outside a bubble, with real
// (tiny) latencies, and checks that closing them leaves no goroutine.
// Goroutines that were running before (other tests of the package) are
// not this test's business.
func TestMocksLeaveNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx := context.Background()

	stt := NewMockSTT(STTConfig{FinalLatency: time.Microsecond}, []string{"hi"})
	ss, err := stt.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.Finalize(); err != nil {
		t.Fatal(err)
	}
	if ev := <-ss.Events(); !ev.FromFinalize {
		t.Fatalf("stt event %+v", ev)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}

	llm := NewMockLLM(LLMConfig{FirstToken: time.Microsecond, TokenInterval: time.Microsecond}, Response{Text: "ok"})
	st, err := llm.Stream(ctx, &providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Recv(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	tts := NewMockTTS(TTSConfig{FirstByte: time.Microsecond})
	ts, err := tts.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Push("a", "hi"); err != nil {
		t.Fatal(err)
	}
	if err := ts.Flush("a"); err != nil {
		t.Fatal(err)
	}
	for ev := range ts.Events() {
		if ev.Kind == providers.TTSFlushed {
			break
		}
	}
	// A session closed with events still owed must end too.
	if err := ts.Push("b", "one two three"); err != nil {
		t.Fatal(err)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
}
