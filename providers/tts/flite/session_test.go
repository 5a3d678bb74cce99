//go:build cgo

package flite

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/providers"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const sentence = "Hello there, how are you today? I am fine, thank you."

// TestAudioAndWords speaks one context per voice and rate and checks the
// audio rate, the words against the text (one event per word: every word
// of the sentence is heard) and the offsets against the audio. Mutations
// caught: token starts converted to samples at 16 kHz whatever the rate
// (the 8 kHz case: the later words fall past the audio and merge); a word
// event sent after its audio (the announced-before check).
func TestAudioAndWords(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		rate int
	}{
		{"slt default", Config{}, 16000},
		{"kal16", Config{Voice: "kal16"}, 16000},
		{"kal at 8 kHz", Config{Voice: "kal"}, 8000},
		{"slt resampled to 24 kHz", Config{Rate: 24000}, 24000},
		{"awb 20 ms chunks", Config{Voice: "awb", Chunk: 20 * time.Millisecond}, 16000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, tc.cfg)
			if e.Rate() != tc.rate {
				t.Fatalf("Rate %d, want %d", e.Rate(), tc.rate)
			}
			s := connect(t, e)
			if err := s.Push("c1", sentence); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush("c1"); err != nil {
				t.Fatal(err)
			}
			sp := readContext(t, s, "c1", tc.rate)
			checkWords(t, sp, sentence, tc.rate, e.Config().Chunk)
			if len(sp.words) != len(strings.Fields(sentence)) {
				t.Errorf("%d word events %q for %d words", len(sp.words), sp.words, len(strings.Fields(sentence)))
			}
			// About 3.5 s of speech; silence or a truncated wave fails.
			if d := sp.duration(tc.rate); d < 2*time.Second || d > 8*time.Second {
				t.Errorf("audio lasts %v", d)
			}
			var pcm []int16
			for _, ev := range sp.events {
				pcm = append(pcm, ev.PCM...)
			}
			if r := rms(pcm); r < 300 {
				t.Errorf("audio RMS %.0f: not speech", r)
			}
		})
	}
}

// TestResamplingKeepsOffsets: the same text at 16 kHz and resampled to
// 24 kHz has the same word offsets and length, within 10 ms (libflite's
// resampler rounds each phrase's length by a few ms). Mutation caught: token starts converted to samples at the
// voice's rate instead of the output rate (offsets at two thirds).
func TestResamplingKeepsOffsets(t *testing.T) {
	speak := func(rate int) *spoken {
		e := newEngine(t, Config{Rate: rate})
		s := connect(t, e)
		if err := s.Push("r", sentence); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush("r"); err != nil {
			t.Fatal(err)
		}
		return readContext(t, s, "r", rate)
	}
	native, resampled := speak(16000), speak(24000)
	if len(native.offsets) != len(resampled.offsets) {
		t.Fatalf("%d words at 16 kHz, %d at 24 kHz", len(native.offsets), len(resampled.offsets))
	}
	for i := range native.offsets {
		if d := (native.offsets[i] - resampled.offsets[i]).Abs(); d > 10*time.Millisecond {
			t.Errorf("word %d %q at %v at 16 kHz, %v at 24 kHz", i, native.words[i], native.offsets[i], resampled.offsets[i])
		}
	}
	if d := (native.duration(16000) - resampled.duration(24000)).Abs(); d > 10*time.Millisecond {
		t.Errorf("audio %v at 16 kHz, %v at 24 kHz", native.duration(16000), resampled.duration(24000))
	}
}

// TestDeterministicAudio: the same text makes the same audio, in another
// session and after other text. Mutation caught: no reseeding of libc's
// rand() per call (every clustergen synthesis differs).
func TestDeterministicAudio(t *testing.T) {
	e := newEngine(t, Config{})
	pcmOf := func(sp *spoken) []int16 {
		var pcm []int16
		for _, ev := range sp.events {
			pcm = append(pcm, ev.PCM...)
		}
		return pcm
	}
	s1 := connect(t, e)
	_ = s1.Push("a", sentence)
	_ = s1.Flush("a")
	first := pcmOf(readContext(t, s1, "a", e.Rate()))
	s2 := connect(t, e)
	_ = s2.Push("x", "Something else first.")
	_ = s2.Flush("x")
	readContext(t, s2, "x", e.Rate())
	_ = s2.Push("a", sentence)
	_ = s2.Flush("a")
	if second := pcmOf(readContext(t, s2, "a", e.Rate())); !slices.Equal(first, second) {
		t.Errorf("the same text made different audio (%d and %d samples)", len(first), len(second))
	}
}

// TestWordsContinueAcrossPieces pushes a context in pieces that cut words
// and phrases: the words join to the text and their offsets keep rising
// across the phrases. Mutation caught: the context offset not advanced
// past a piece (offsets restart at each phrase).
func TestWordsContinueAcrossPieces(t *testing.T) {
	e := newEngine(t, Config{})
	s := connect(t, e)
	pieces := []string{"Good mor", "ning, and wel", "come to the show", ". Let us ", "begin"}
	for _, p := range pieces {
		if err := s.Push("ctx", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush("ctx"); err != nil {
		t.Fatal(err)
	}
	sp := readContext(t, s, "ctx", e.Rate())
	checkWords(t, sp, strings.Join(pieces, ""), e.Rate(), e.Config().Chunk)
	if len(sp.words) != 10 {
		t.Errorf("%d words %q, want 10", len(sp.words), sp.words)
	}
}

// TestCancelMidContext cancels a long context after its first audio: the
// ack comes within 500 ms with at most 2 of its events before it, nothing
// of it after it, and the session speaks the next context. Mutation
// caught: Cancel that only queues the ack (the context keeps streaming
// after it; seen failing with the RetractLocked call of Cancel dropped,
// now that the events wait in the pump).
func TestCancelMidContext(t *testing.T) {
	e := newEngine(t, Config{})
	s := connect(t, e)
	long := strings.Repeat("This answer goes on for a long while, and the caller will cut it short. ", 6)
	if err := s.Push("e1", long); err != nil {
		t.Fatal(err)
	}
	first := <-s.Events()
	if first.Kind != providers.TTSWord && first.Kind != providers.TTSAudio {
		t.Fatalf("first event %v", first.Kind)
	}
	start := time.Now()
	if err := s.Cancel("e1"); err != nil {
		t.Fatal(err)
	}
	stragglers := 0
	for ev := range s.Events() {
		if ev.Kind == providers.TTSCancelled {
			if ev.ContextID != "e1" {
				t.Fatalf("ack for %q", ev.ContextID)
			}
			break
		}
		stragglers++
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("ack after %v", d)
	}
	if stragglers > 2 {
		t.Errorf("%d events of the cancelled context before the ack", stragglers)
	}
	if err := s.Push("e1", "more"); !errors.Is(err, ErrContextClosed) {
		t.Errorf("push to the cancelled context: %v", err)
	}
	// The next context is served, and nothing of e1 comes between.
	if err := s.Push("e2", "Yes?"); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush("e2"); err != nil {
		t.Fatal(err)
	}
	sp := readContext(t, s, "e2", e.Rate())
	checkWords(t, sp, "Yes?", e.Rate(), e.Config().Chunk)
}

// TestCancelBeforeAudio cancels contexts that have not been spoken yet, an
// unknown id, and one twice: every id gets one ack, in order, and the
// cancelled text is never spoken. Mutation caught: Cancel that leaves the
// context in the queue (its words follow the ack).
func TestCancelBeforeAudio(t *testing.T) {
	e := newEngine(t, Config{})
	s := connect(t, e)
	for _, id := range []string{"a", "b"} {
		if err := s.Push(id, "Never spoken, this one."); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "unknown", "b"} {
		if err := s.Cancel(id); err != nil {
			t.Fatal(err)
		}
	}
	var acks []string
	for len(acks) < 3 {
		ev := <-s.Events()
		if ev.Kind != providers.TTSCancelled {
			// a's first word may have been on offer already.
			if ev.ContextID != "a" || len(acks) > 0 {
				t.Fatalf("event %v of %q among the acks", ev.Kind, ev.ContextID)
			}
			continue
		}
		acks = append(acks, ev.ContextID)
	}
	if got := strings.Join(acks, ","); got != "a,b,unknown" {
		t.Errorf("acks %s", got)
	}
	if err := s.Push("c", "Done."); err != nil {
		t.Fatal(err)
	}
	_ = s.Flush("c")
	readContext(t, s, "c", e.Rate())
}

// TestCancelIdleContext cancels a context that has nothing to offer (its
// phrase is not complete) while run is parked: the ack is offered at once.
// The session runs in a synctest bubble, so synctest.Wait tells when its
// goroutines are parked. Mutation caught: Cancel that does not wake the
// delivery goroutine (the ack waits for some other event; seen failing
// with ttspump's QueueAheadLocked not signalling).
func TestCancelIdleContext(t *testing.T) {
	e := newEngine(t, Config{})
	synctest.Test(t, func(t *testing.T) {
		s, err := e.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Push("a", "waiting for the rest of"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case ev := <-s.Events():
			t.Fatalf("event %v before anything is owed", ev.Kind)
		default:
		}
		if err := s.Cancel("a"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case ev := <-s.Events():
			if ev.Kind != providers.TTSCancelled || ev.ContextID != "a" {
				t.Fatalf("event %v of %q, want the ack", ev.Kind, ev.ContextID)
			}
		default:
			t.Fatal("no ack offered once the session settled")
		}
	})
}

// TestCancelOvertakesAudio cancels a queued context while another one
// streams: its ack overtakes the streaming context's audio (at most the
// event on offer comes first). Mutation caught: acks sent only when no
// context has audio to offer (seen failing with the ack queued behind the
// audio, QueueLocked for QueueAheadLocked).
func TestCancelOvertakesAudio(t *testing.T) {
	e := newEngine(t, Config{})
	s := connect(t, e)
	if err := s.Push("a", strings.Repeat("A long answer that streams for a while. ", 4)); err != nil {
		t.Fatal(err)
	}
	<-s.Events()
	if err := s.Push("b", "Queued behind a."); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel("b"); err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		ev := <-s.Events()
		if ev.Kind == providers.TTSCancelled && ev.ContextID == "b" {
			break
		}
		if ev.ContextID != "a" || n >= 2 {
			t.Fatalf("event %d (%v of %q) before b's ack", n, ev.Kind, ev.ContextID)
		}
	}
}

// TestTwoContextsInSequence opens two contexts before reading: the second
// is spoken only after the first's Flushed, and its offsets start again
// from zero. Mutations caught: synthesizing the newest open context
// instead of the oldest (a is never spoken); an offset carried over from
// the context before.
func TestTwoContextsInSequence(t *testing.T) {
	e := newEngine(t, Config{})
	s := connect(t, e)
	for _, c := range []struct{ id, text string }{{"a", "First answer."}, {"b", "Second answer, a bit longer."}} {
		if err := s.Push(c.id, c.text); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush("b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush("a"); err != nil {
		t.Fatal(err)
	}
	a := readContext(t, s, "a", e.Rate())
	b := readContext(t, s, "b", e.Rate())
	checkWords(t, a, "First answer.", e.Rate(), e.Config().Chunk)
	checkWords(t, b, "Second answer, a bit longer.", e.Rate(), e.Config().Chunk)
	if b.offsets[0] > 100*time.Millisecond {
		t.Errorf("second context's first word at %v", b.offsets[0])
	}
}

// TestUnflushedTextWaits: a complete phrase is spoken without Flush, the
// words after it wait for their phrase's end or Flush. Mutation caught:
// takePiece speaking every complete word at once (the half phrase is taken
// into synthesis before the first word is offered).
func TestUnflushedTextWaits(t *testing.T) {
	e := newEngine(t, Config{})
	s := connect(t, e)
	if err := s.Push("a", "One phrase. And half of"); err != nil {
		t.Fatal(err)
	}
	var words []string
	for len(words) < 2 {
		ev := <-s.Events()
		if ev.Kind == providers.TTSWord {
			words = append(words, ev.Word)
		}
	}
	// The first word was offered after the first phrase's synthesis came
	// back, when the synthesizer had looked for the next job: the rest is
	// still held.
	ss := s.(*session)
	ss.mu.Lock()
	c := ss.contexts.Get("a")
	pending, partial := strings.Join(c.pending, " "), c.partial
	ss.mu.Unlock()
	if pending != "And half" || partial != "of" {
		t.Errorf("held %q + %q, want \"And half\" + \"of\"", pending, partial)
	}
	if err := s.Flush("a"); err != nil {
		t.Fatal(err)
	}
	sp := readContext(t, s, "a", e.Rate())
	if got := strings.Join(append(words, sp.words...), " "); got != "One phrase. And half of" {
		t.Errorf("words %q", got)
	}
}

// TestCloseDuringSynthesis closes a session whose reader went away while
// run offers an event and a long phrase is being synthesized: Close
// returns after both goroutines end, Events closes, a second Close is
// fine, and requests fail with ErrClosed (the leak check of TestMain sees
// any goroutine left). Mutation caught: the delivery goroutine not
// watching the session's end while it offers an event (Close hangs; seen
// failing with the pump's context.AfterFunc in newSession dropped).
func TestCloseDuringSynthesis(t *testing.T) {
	e := newEngine(t, Config{})
	s, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Push("a", "Hi. "+strings.Repeat("word ", 39)+"end."); err != nil {
		t.Fatal(err)
	}
	// "Hi." is ready when its first event comes; the long phrase was handed
	// to the synthesizer on the way, and run offers the next event.
	<-s.Events()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range s.Events() {
	}
	for _, err := range []error{s.Push("a", "x"), s.Flush("a"), s.Cancel("a")} {
		if !errors.Is(err, providers.ErrClosed) {
			t.Errorf("after Close: %v, want ErrClosed", err)
		}
	}
}

// TestConnectContextEndsSession: cancelling Connect's context closes
// Events. Mutation caught: goroutines that watch only Close.
func TestConnectContextEndsSession(t *testing.T) {
	e := newEngine(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := e.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.Push("a", "Something to say, and more.")
	cancel()
	for range s.Events() {
	}
	if err := s.Push("a", "x"); !errors.Is(err, providers.ErrClosed) {
		t.Errorf("push after the context ended: %v", err)
	}
	if _, err := e.Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect on a done context: %v", err)
	}
}

// TestBadInput: odd text never fails the session; requests it cannot take
// fail with typed errors and leave it usable. Mutation caught: the size
// check after the split (the refused push is spoken all the same).
func TestBadInput(t *testing.T) {
	e := newEngine(t, Config{MaxContextBytes: 1024, MaxOpenContexts: 2})
	cases := []struct {
		name  string
		text  string
		words string // the words spoken, joined by spaces
	}{
		{"empty", "", ""},
		{"whitespace", " \t\n ", ""},
		{"punctuation only", "... -- ?", ""},
		{"non-ASCII", "Café — “quoted” naïve 日本語 ok…", "Café — “quoted” naïve 日本語 ok…"},
		{"control runes", "bell\a and\x00 nul", "bell\a and\x00 nul"},
		{"invalid UTF-8", "bad \xff\xfe byte", "bad \xff\xfe byte"},
		{"long token", strings.Repeat("x", 300) + " then words.", strings.Repeat("x", 300) + " then words."},
		{"numbers", "Call 555 at 3:45pm, $5.50.", "Call 555 at 3:45pm, $5.50."},
	}
	s := connect(t, e)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "bad-" + tc.name
			if err := s.Push(id, tc.text); err != nil {
				t.Fatal(err)
			}
			if err := s.Flush(id); err != nil {
				t.Fatal(err)
			}
			sp := readContext(t, s, id, e.Rate())
			if got := strings.Join(sp.words, " "); got != tc.words {
				t.Errorf("words %q, want %q", got, tc.words)
			}
			if tc.words != "" {
				checkWords(t, sp, tc.words, e.Rate(), e.Config().Chunk)
			}
		})
	}
	errCases := []struct {
		name string
		do   func() error
		want error
	}{
		{"empty id push", func() error { return s.Push("", "x") }, ErrEmptyContextID},
		{"empty id flush", func() error { return s.Flush("") }, ErrEmptyContextID},
		{"empty id cancel", func() error { return s.Cancel("") }, ErrEmptyContextID},
		{"huge text", func() error { return s.Push("big", strings.Repeat("a ", 600)) }, ErrTextTooLong},
		{"push after flush", func() error { return s.Push("bad-empty", "x") }, ErrContextClosed},
		{"flush after flush", func() error { return s.Flush("bad-empty") }, ErrContextClosed},
		{"third open context", func() error {
			if err := s.Push("open2", "x"); err != nil {
				return err
			}
			return s.Push("open3", "x")
		}, ErrTooManyContexts},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.do(); !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
	// Still usable, and the huge push took nothing.
	if err := s.Push("big", "small"); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush("big"); err != nil {
		t.Fatal(err)
	}
	if sp := readContext(t, s, "big", e.Rate()); strings.Join(sp.words, " ") != "small" {
		t.Errorf("after the refused push, words %q", sp.words)
	}
	if err := s.Cancel("open2"); err != nil {
		t.Fatal(err)
	}
	if ev := <-s.Events(); ev.Kind != providers.TTSCancelled || ev.ContextID != "open2" {
		t.Fatalf("event %v %q, want the ack of open2", ev.Kind, ev.ContextID)
	}
}

// TestWarm warms each voice and honours a done context.
func TestWarm(t *testing.T) {
	e := newEngine(t, Config{Voice: "kal16"})
	if err := e.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.Warm(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Warm on a done context: %v", err)
	}
}

// TestSessionInBubble speaks a context inside a synctest bubble, as the
// contract suite runs providers: the session works there, and since it
// has no timers the whole context arrives at one virtual instant.
// Mutation caught: audio paced in real time (a sleep of one chunk per
// audio event moves virtual time).
func TestSessionInBubble(t *testing.T) {
	e := newEngine(t, Config{})
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		s, err := e.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.Push("b", sentence); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush("b"); err != nil {
			t.Fatal(err)
		}
		sp := readContext(t, s, "b", e.Rate())
		checkWords(t, sp, sentence, e.Rate(), e.Config().Chunk)
		if d := time.Since(start); d != 0 {
			t.Errorf("virtual time moved by %v", d)
		}
	})
}
