//go:build cgo

package flite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/providers"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const sentence = "Hello there, how are you today? I am fine, thank you."

// TestAudioAndWords speaks one context per voice and rate and checks the
// audio rate, the words against the text and the offsets against the
// audio. Mutations caught: offsets read in seconds of the voice's rate
// after resampling (the 24 kHz case: words past their audio); a word event
// sent after its audio (announced-before check); the trimmed lead not
// subtracted from the offsets (words a chunk late).
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
// of it after it, and the session speaks the next context. Mutations
// caught: Cancel that only queues the ack (the context keeps streaming
// after it); run not woken by Cancel (the ack waits for the reader to take
// the offered chunk, then the rest of the piece); acks queued behind
// audio.
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

// TestTwoContextsInSequence opens two contexts before reading: the second
// is spoken only after the first's Flushed, and its offsets start again
// from zero. Mutation caught: synthesizing any open context instead of the
// head (b's events interleave with a's).
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
	// back, when run had looked for the next job: the rest is still held.
	ss := s.(*session)
	ss.mu.Lock()
	c := ss.open["a"]
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

// TestCloseDuringSynthesis closes a session while a long phrase is being
// synthesized and its reader is away: Close returns after both goroutines
// end, Events closes, and a second Close is fine (the leak check of
// TestMain sees any goroutine left). Mutation caught: run not selecting on
// the session's end while offering an event (Close hangs).
func TestCloseDuringSynthesis(t *testing.T) {
	e := newEngine(t, Config{})
	s, err := e.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Push("a", strings.Repeat("word ", 39)+"end."); err != nil {
		t.Fatal(err)
	}
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
// fail with typed errors and leave it usable. Mutations caught: non-ASCII
// given to libflite as is (garbage tokens break the word mapping); the
// size check after the split (the huge push is half taken).
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
	// Still usable: the huge push took nothing.
	if err := s.Cancel("big"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel("open2"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if ev := <-s.Events(); ev.Kind != providers.TTSCancelled {
			t.Fatalf("event %v %q, want the acks", ev.Kind, ev.ContextID)
		}
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
