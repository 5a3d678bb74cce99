package pocketsphinx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// hangover is the audio sent after a segment's end before Finalize, as a
// VAD would (250 ms).
const hangover = 4000

// wantFlite is what pocketsphinx 0.8 with the Debian en-us model hears in
// each segment of en.wav (flite's slt voice), against the sidecar's text.
// Two words of the second sentence come out wrong ("booking" as "biking",
// "two" as "to"); pocketsphinx_continuous -infile en.wav gives the same
// three lines, so these are the model's errors, not the streaming's.
var wantFlite = []string{
	"please call me back tomorrow morning",
	"my biking number is four to seven",
	"the train leaves at half past nine",
}

// TestTranscribesFliteSpeech is issue 6's Done-when: the en.wav fixture
// sent in 20 ms chunks, SpeechStarted 200 ms into each sentence and
// Finalize after it (plus a VAD-like hangover), and each final carries the
// sentence's words; the decoder goes back to the pool after each final.
// Mutations caught: audio not decoded (or decoded from a reused buffer
// after SendAudio returned: garbled words), the pre-roll not fed (seen:
// the first word lost), Finalize answered before the audio sent ahead of
// it is decoded (text cut short), the utterance not restarted after a
// final (the next sentence has no text), a final without FromFinalize or
// SpeechFinal, the decoder kept after the final (idle 0), and a lost word
// error budget (a wrong model or rate).
func TestTranscribesFliteSpeech(t *testing.T) {
	needEngine(t)
	fx := loadFixture(t, "en")
	if fx.rate != 16000 || len(fx.segments) != len(wantFlite) {
		t.Fatalf("en.wav: %d Hz, %d segments; want 16000 Hz, %d", fx.rate, len(fx.segments), len(wantFlite))
	}
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := connect(t, e, t.Context())
	defer s.Close()
	from, errs, total := 0, 0, 0
	for i, seg := range fx.segments {
		from = sendUtterance(t, s, fx.pcm, from, min(len(fx.pcm), seg.End+hangover), seg)
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		_, final := untilFinal(t, s)
		if !final.FromFinalize || !final.SpeechFinal {
			t.Errorf("segment %d: final %+v lacks FromFinalize or SpeechFinal", i, final)
		}
		if loaded, idle := e.Decoders(); loaded != 1 || idle != 1 {
			t.Errorf("segment %d: after the final %d decoders loaded, %d idle; want 1 and 1", i, loaded, idle)
		}
		if got := words(final.Text); got != wantFlite[i] {
			t.Errorf("segment %d: final %q, want %q (sidecar: %q)", i, got, wantFlite[i], seg.Text)
		}
		errs += wordErrors(seg.Text, final.Text)
		total += len(strings.Fields(seg.Text))
	}
	if d := s.Dropped(); d != 0 {
		t.Errorf("dropped %d samples", d)
	}
	t.Logf("word errors against the sidecar: %d of %d", errs, total)
	if errs > 2 {
		t.Errorf("%d word errors of %d, want at most 2", errs, total)
	}
}

// TestInterimBeforeFinal is the contract's streaming check: with speech
// sent and no Finalize, the first event is an interim with text; the
// final comes only after Finalize.
// Mutations caught: no interims (the watchdog fires once the worker idles),
// an interim sent for an unchanged hypothesis (two equal interims in a
// row), and a final made without Finalize.
func TestInterimBeforeFinal(t *testing.T) {
	needEngine(t)
	fx := loadFixture(t, "en")
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := connect(t, e, t.Context())
		defer s.Close()
		seg := fx.segments[0]
		sendUtterance(t, s, fx.pcm, 0, seg.End+hangover, seg)
		synctest.Wait() // the worker has decoded all of it and idles
		ev, ok := next(t, s)
		if !ok || ev.Final || ev.Err != nil || ev.Text == "" {
			t.Fatalf("first event %+v (open %v), want an interim with text", ev, ok)
		}
		interims := []string{ev.Text}
	drain:
		for {
			select {
			case ev := <-s.Events():
				if ev.Final || ev.Err != nil {
					t.Fatalf("event %+v before Finalize", ev)
				}
				interims = append(interims, ev.Text)
			default:
				break drain
			}
		}
		for i := 1; i < len(interims); i++ {
			if interims[i] == interims[i-1] {
				t.Errorf("interim %d repeats %q", i, interims[i])
			}
		}
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		more, final := untilFinal(t, s)
		if len(more) != 0 {
			t.Errorf("interims %q after Finalize with no new audio", more)
		}
		if words(final.Text) != wantFlite[0] || !final.FromFinalize {
			t.Errorf("final %+v, want %q from Finalize", final, wantFlite[0])
		}
		t.Logf("%d interims, last %q", len(interims), interims[len(interims)-1])
	})
}

// TestCloseMidUtterance closes a session while it is decoding a sentence:
// Events is closed by the time Close returns, nothing follows, later calls
// fail with providers.ErrClosed, Close is idempotent, no goroutine is
// left (the synctest bubble panics otherwise), and the decoder goes back
// to the pool clean: the next session on it transcribes the next sentence
// without the first one's leftovers.
// Mutations caught: Close not stopping the worker (the bubble deadlocks or
// keeps a goroutine), events still sent after Close, SendAudio accepted
// after Close, and a decoder returned mid-utterance (the next final starts
// with the first sentence's words).
func TestCloseMidUtterance(t *testing.T) {
	needEngine(t)
	fx := loadFixture(t, "en")
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{PoolSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := connect(t, e, t.Context())
		sendUtterance(t, s, fx.pcm, 0, fx.segments[0].End, fx.segments[0])
		if ev, ok := next(t, s); !ok || ev.Final {
			t.Fatalf("first event %+v (open %v), want an interim", ev, ok)
		}
		if loaded, idle := e.Decoders(); loaded != 1 || idle != 0 {
			t.Errorf("mid utterance: loaded %d idle %d, want 1 and 0 (held)", loaded, idle)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for ev := range s.Events() { // buffered before the Close, then closed
			if ev.Final || ev.Err != nil {
				t.Errorf("after Close: %+v", ev)
			}
		}
		if err := s.SendAudio(fx.pcm[:frame]); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("SendAudio after Close: %v, want ErrClosed", err)
		}
		if err := s.Finalize(); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("Finalize after Close: %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if loaded, idle := e.Decoders(); loaded != 1 || idle != 1 {
			t.Errorf("decoders loaded %d idle %d after Close, want 1 and 1", loaded, idle)
		}

		s2 := connect(t, e, t.Context())
		defer s2.Close()
		seg := fx.segments[2]
		sendUtterance(t, s2, fx.pcm, fx.segments[1].End+hangover, seg.End+hangover, seg)
		if err := s2.Finalize(); err != nil {
			t.Fatal(err)
		}
		if _, final := untilFinal(t, s2); words(final.Text) != wantFlite[2] {
			t.Errorf("next session's final %q, want %q", words(final.Text), wantFlite[2])
		}
	})
}

// TestContextEndsSession: cancelling Connect's context ends the session
// like Close. Mutation caught: the worker watching only Close (Events
// never closes; the watchdog fires).
func TestContextEndsSession(t *testing.T) {
	needEngine(t)
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		ctx, cancel := context.WithCancel(t.Context())
		s := connect(t, e, ctx)
		defer s.Close()
		cancel()
		if ev, ok := next(t, s); ok {
			t.Fatalf("event %+v after cancel, want Events closed", ev)
		}
		if err := s.SendAudio(make([]int16, frame)); !errors.Is(err, providers.ErrClosed) {
			t.Errorf("SendAudio after cancel: %v, want ErrClosed", err)
		}
	})
}

// TestMaxUtterance: an utterance longer than MaxUtterance without
// Finalize is cut into a final that does not claim FromFinalize, and its
// decoder goes back to the pool (a caller on a noisy line the VAD takes
// for endless speech must not hold one); the Finalize that comes later
// gets an empty final.
// Mutations caught: the bound ignored (no final before Finalize), the cut
// claiming SpeechFinal/FromFinalize, the decoder kept after the cut (idle
// 0), the later Finalize unanswered (the watchdog fires).
func TestMaxUtterance(t *testing.T) {
	needEngine(t)
	fx := loadFixture(t, "en")
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{MaxUtterance: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := connect(t, e, t.Context())
		defer s.Close()
		sendUtterance(t, s, fx.pcm, 0, fx.segments[0].End, fx.segments[0]) // 2.6 s
		_, final := untilFinal(t, s)
		if final.FromFinalize || final.SpeechFinal {
			t.Errorf("cut final %+v claims FromFinalize or SpeechFinal", final)
		}
		synctest.Wait()
		if loaded, idle := e.Decoders(); loaded != 1 || idle != 1 {
			t.Errorf("after the cut: %d decoders loaded, %d idle; want 1 and 1 (given back)", loaded, idle)
		}
		// The rest of the speech has no decoder: the Finalize owed is
		// answered, empty, so the turn does not wait.
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		if _, final := untilFinal(t, s); final.Text != "" || !final.FromFinalize {
			t.Errorf("Finalize after the cut: %+v, want an empty final from Finalize", final)
		}
	})
}

// TestPoolBound: a Connect takes no decoder, so it never waits; a speech
// start when all PoolSize decoders are busy waits AcquireTimeout, then
// drops its utterance, counts the wait and the timeout, and still answers
// its Finalize with an empty final (the turn must not wait for a final
// that will not come); a decoder given back is reused, not reloaded.
// Mutations caught (seen failing): a wait without a deadline (the bubble
// deadlocks), the timed-out Finalize left unanswered (the watchdog fires),
// the timeout not counted, a released decoder freed instead of kept
// (loaded count), and a decoder taken at Connect (the second Connect
// times out).
func TestPoolBound(t *testing.T) {
	needEngine(t)
	fx := loadFixture(t, "en")
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{PoolSize: 1, AcquireTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		a := connect(t, e, t.Context())
		defer a.Close()
		seg := fx.segments[0]
		sendUtterance(t, a, fx.pcm, 0, seg.End+hangover, seg)
		synctest.Wait() // a holds the only decoder
		start := time.Now()
		b := connect(t, e, t.Context())
		defer b.Close()
		if d := time.Since(start); d != 0 {
			t.Errorf("second Connect took %v, want no wait", d)
		}
		sendUtterance(t, b, fx.pcm, 0, seg.End+hangover, seg)
		if err := b.Finalize(); err != nil {
			t.Fatal(err)
		}
		_, final := untilFinal(t, b)
		if final.Text != "" || !final.FromFinalize || !final.SpeechFinal {
			t.Errorf("timed-out utterance's final %+v, want empty, FromFinalize and SpeechFinal", final)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("the empty final came after %v, want AcquireTimeout (2s)", d)
		}
		if st := e.Stats(); st.Waited != 1 || st.TimedOut != 1 || st.Acquired != 1 {
			t.Errorf("stats %+v, want 1 acquired, 1 waited, 1 timed out", st)
		}
		if err := a.Finalize(); err != nil {
			t.Fatal(err)
		}
		if _, final := untilFinal(t, a); words(final.Text) != wantFlite[0] {
			t.Errorf("holder's final %q, want %q", words(final.Text), wantFlite[0])
		}
		// b speaks again: the decoder a gave back is b's now.
		sendUtterance(t, b, fx.pcm, 0, seg.End+hangover, seg)
		if err := b.Finalize(); err != nil {
			t.Fatal(err)
		}
		if _, final := untilFinal(t, b); words(final.Text) != wantFlite[0] {
			t.Errorf("b's second final %q, want %q", words(final.Text), wantFlite[0])
		}
		if st := e.Stats(); st.Loaded != 1 || st.Idle != 1 || st.Acquired != 2 {
			t.Errorf("stats %+v, want 1 loaded, 1 idle, 2 acquired", st)
		}
	})
}

// TestWarmAndClose: Warm loads one idle decoder (twice: still one); Close
// frees the idle ones, refuses new sessions, frees a speaking session's
// decoder when it ends, and fails an open session's next speech start
// with ErrEngineClosed.
// Mutations caught: Warm loading a decoder each call, Close leaving idle
// decoders, a session's decoder kept after Close, a speech start on a
// closed engine that hangs or passes silently.
func TestWarmAndClose(t *testing.T) {
	needEngine(t)
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := e.Warm(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if loaded, idle := e.Decoders(); loaded != 1 || idle != 1 {
			t.Fatalf("after Warm x2: loaded %d idle %d, want 1 and 1", loaded, idle)
		}
		s := connect(t, e, t.Context())
		quiet := connect(t, e, t.Context())
		defer quiet.Close()
		if err := s.SpeechStarted(); err != nil { // takes the idle one
			t.Fatal(err)
		}
		synctest.Wait()
		if err := e.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		if loaded, idle := e.Decoders(); loaded != 2 || idle != 1 {
			t.Fatalf("a session speaking and Warm: loaded %d idle %d, want 2 and 1", loaded, idle)
		}
		e.Close()
		if _, err := e.Connect(t.Context()); !errors.Is(err, ErrEngineClosed) {
			t.Errorf("Connect after Close: %v, want ErrEngineClosed", err)
		}
		if err := e.Warm(t.Context()); !errors.Is(err, ErrEngineClosed) {
			t.Errorf("Warm after Close: %v, want ErrEngineClosed", err)
		}
		if loaded, _ := e.Decoders(); loaded != 1 {
			t.Errorf("loaded %d after Close with a session speaking, want 1 (the idle one freed)", loaded)
		}
		s.Close()
		if loaded, idle := e.Decoders(); loaded != 0 || idle != 0 {
			t.Errorf("after the last session: loaded %d idle %d, want 0", loaded, idle)
		}
		if err := quiet.SpeechStarted(); err != nil {
			t.Fatal(err)
		}
		if ev, ok := next(t, quiet); !ok || !errors.Is(ev.Err, ErrEngineClosed) {
			t.Errorf("speech start on a closed engine: %+v (open %v), want ErrEngineClosed", ev, ok)
		}
		if _, ok := next(t, quiet); ok {
			t.Error("events still open after the failure")
		}
	})
}

// TestNewWithoutCgo: a CGO_ENABLED=0 build refuses with ErrNoCgo (run it
// with CGO_ENABLED=0 go test -run NoCgo). Mutation caught: New without
// the cgo check (it would validate and hand out an engine that cannot
// load).
func TestNewWithoutCgo(t *testing.T) {
	if cgoEnabled {
		t.Skip("cgo build; run with CGO_ENABLED=0")
	}
	if _, err := New(Config{}); !errors.Is(err, ErrNoCgo) {
		t.Fatalf("New: %v, want ErrNoCgo", err)
	}
}

// TestLimits: the engine reports its decoders as a shared limit, PoolSize
// of them serving CallsPerDecoder calls each, not one per call.
// Mutation caught: PerCall set (the capacity would be PoolSize calls, the
// defect's 2 of 20), the pool size not the configured one.
func TestLimits(t *testing.T) {
	needEngine(t)
	for _, c := range []struct {
		name      string
		cfg       Config
		size      int
		wantCalls int
	}{
		{name: "default", cfg: Config{}, size: DefaultPoolSize, wantCalls: DefaultPoolSize * CallsPerDecoder},
		{name: "one decoder", cfg: Config{PoolSize: 1}, size: 1, wantCalls: CallsPerDecoder},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ls := e.Limits()
			if len(ls) != 1 {
				t.Fatalf("limits %+v, want one", ls)
			}
			l := ls[0]
			if l.PerCall || l.Size != c.size || l.CallsPerUnit != CallsPerDecoder || l.Calls() != c.wantCalls || l.Name == "" {
				t.Errorf("limit %+v (calls %d), want %d decoders shared by %d calls each (%d calls)", l, l.Calls(), c.size, CallsPerDecoder, c.wantCalls)
			}
		})
	}
}
