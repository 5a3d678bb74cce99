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
// sent in 20 ms chunks, Finalize after each sentence (plus a VAD-like
// hangover), and each final carries the sentence's words.
// Mutations caught: audio not decoded (or decoded from a reused buffer
// after SendAudio returned: garbled words), Finalize answered before the
// audio sent ahead of it is decoded (text cut short), the utterance not
// restarted after a final (the next sentence has no text), a final
// without FromFinalize or SpeechFinal, and a lost word error budget (a
// wrong model or rate).
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
		to := min(len(fx.pcm), seg.End+hangover)
		sendFrames(t, s, fx.pcm[from:to])
		from = to
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		_, final := untilFinal(t, s)
		if !final.FromFinalize || !final.SpeechFinal {
			t.Errorf("segment %d: final %+v lacks FromFinalize or SpeechFinal", i, final)
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
		sendFrames(t, s, fx.pcm[:seg.End+hangover])
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
		sendFrames(t, s, fx.pcm[:fx.segments[0].End])
		if ev, ok := next(t, s); !ok || ev.Final {
			t.Fatalf("first event %+v (open %v), want an interim", ev, ok)
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
		sendFrames(t, s2, fx.pcm[fx.segments[1].End+hangover:seg.End+hangover])
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
// Finalize is cut into a final that does not claim FromFinalize.
// Mutation caught: the bound ignored (no final before Finalize), or the
// cut claiming SpeechFinal/FromFinalize.
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
		sendFrames(t, s, fx.pcm[:fx.segments[0].End]) // 2.6 s
		_, final := untilFinal(t, s)
		if final.FromFinalize || final.SpeechFinal {
			t.Errorf("cut final %+v claims FromFinalize or SpeechFinal", final)
		}
	})
}

// TestPoolBound: PoolSize decoders at most; a Connect beyond waits
// AcquireTimeout and fails with providers.Timeout, and a freed decoder is
// reused rather than reloaded.
// Mutations caught: no bound (the second Connect succeeds), a wait without
// a deadline (the bubble deadlocks), and a released decoder freed instead
// of kept (loaded count or a reload).
func TestPoolBound(t *testing.T) {
	needEngine(t)
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config{PoolSize: 1, AcquireTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		s := connect(t, e, t.Context())
		start := time.Now()
		_, err = e.Connect(t.Context())
		var to *providers.Timeout
		if !errors.As(err, &to) || time.Since(start) != 2*time.Second {
			t.Fatalf("second Connect: %v after %v, want a Timeout after 2s", err, time.Since(start))
		}
		s.Close()
		s2 := connect(t, e, t.Context())
		if loaded, idle := e.Decoders(); loaded != 1 || idle != 0 {
			t.Errorf("decoders loaded %d idle %d, want 1 and 0", loaded, idle)
		}
		s2.Close()
	})
}

// TestWarmAndClose: Warm loads one idle decoder (twice: still one); Close
// frees the idle ones, refuses new sessions and frees an open session's
// decoder when it ends.
// Mutations caught: Warm loading a decoder each call, Close leaving idle
// decoders, a session's decoder kept after Close.
func TestWarmAndClose(t *testing.T) {
	needEngine(t)
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
	s := connect(t, e, t.Context()) // takes the idle one
	if err := e.Warm(t.Context()); err != nil {
		t.Fatal(err)
	}
	if loaded, idle := e.Decoders(); loaded != 2 || idle != 1 {
		t.Fatalf("a session and Warm: loaded %d idle %d, want 2 and 1", loaded, idle)
	}
	e.Close()
	if _, err := e.Connect(t.Context()); !errors.Is(err, ErrEngineClosed) {
		t.Errorf("Connect after Close: %v, want ErrEngineClosed", err)
	}
	if err := e.Warm(t.Context()); !errors.Is(err, ErrEngineClosed) {
		t.Errorf("Warm after Close: %v, want ErrEngineClosed", err)
	}
	if loaded, _ := e.Decoders(); loaded != 1 {
		t.Errorf("loaded %d after Close with a session open, want 1 (the idle one freed)", loaded)
	}
	s.Close()
	if loaded, idle := e.Decoders(); loaded != 0 || idle != 0 {
		t.Errorf("after the last session: loaded %d idle %d, want 0", loaded, idle)
	}
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
