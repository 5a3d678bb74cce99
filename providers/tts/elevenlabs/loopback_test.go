package elevenlabs

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/elevenlabs/elevenlabsmock"
)

// Catches what the in-memory pipe hides: the real TCP dial and HTTP
// upgrade, the close handshake over a socket, and goroutines (the
// transport's, the session's, the deliverer) left after Close, after a
// cancel and after a failure.
func TestRealLoopbackSession(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	before := goleak.IgnoreCurrent()
	srv := elevenlabsmock.New()
	srv.SetStyle(elevenlabsmock.Style{Pace: 5 * time.Millisecond})
	t.Setenv(testKeyEnv, testKey)
	a, err := New(Config{URL: srv.URL(), APIKeyEnv: testKeyEnv, ReplyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := a.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Push("a", "good morning to you")
	_ = s.Flush("a")
	sm := summarize(t, untilFlushed(t, s, "a"), DefaultSampleRate)
	if strings.Join(sm.words, " ") != "good morning to you" {
		t.Fatalf("words %q", sm.words)
	}
	_ = s.Push("b", strings.Repeat("long answer ", 50))
	_ = s.Flush("b")
	_ = s.Cancel("b")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A session left by its caller in the middle, ended by its context.
	ctx, cancel := context.WithCancel(context.Background())
	s2, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = s2.Push("a", strings.Repeat("more words ", 50))
	_ = s2.Flush("a")
	cancel()
	for range s2.Events() {
	}
	_ = s2.Close()
	_ = a.Close()
	srv.Close()
	goleak.VerifyNone(t, before)
}

// TestLiveElevenLabs speaks two sentences with the real service and checks
// loose things: words and audio arrive, the words are those of the text,
// offsets never go back, the audio lasts past the last word's start,
// Flushed ends the context; then a cancelled context is acknowledged and
// the next one is served. It runs with BRISVOX_LIVE_TESTS=1 and
// ELEVENLABS_API_KEY set.
func TestLiveElevenLabs(t *testing.T) {
	speechtest.SkipUnlessLive(t, DefaultAPIKeyEnv)
	a, err := New(Config{SampleRate: 16000, ReplyTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const text = "Hello there. Your table for two is booked for eight o'clock tonight."
	for _, piece := range []string{"Hello there. ", "Your table for two is booked ", "for eight o'clock tonight."} {
		if err := s.Push("one", piece); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if err := s.Flush("one"); err != nil {
		t.Fatal(err)
	}
	var evs []providers.TTSEvent
	var firstAudio time.Duration
	for ev := range s.Events() {
		if ev.Kind == providers.TTSError {
			t.Fatalf("session failed: %v", ev.Err)
		}
		if ev.Kind == providers.TTSAudio && firstAudio == 0 {
			firstAudio = time.Since(start)
		}
		evs = append(evs, ev)
		if ev.Kind == providers.TTSFlushed {
			break
		}
	}
	sm := summarize(t, evs, 16000)
	if !sm.flushed || len(sm.pcm) == 0 || len(sm.words) == 0 {
		t.Fatalf("flushed %v, %d samples, %d words", sm.flushed, len(sm.pcm), len(sm.words))
	}
	if got := strings.Join(sm.words, " "); got != text {
		t.Errorf("words %q, want %q", got, text)
	}
	for i := 1; i < len(sm.offsets); i++ {
		if sm.offsets[i] < sm.offsets[i-1] {
			t.Errorf("offset %d goes back: %v", i, sm.offsets)
		}
	}
	audio := time.Duration(len(sm.pcm)) * time.Second / 16000
	if audio <= sm.offsets[len(sm.offsets)-1] {
		t.Errorf("audio %v ends before the last word at %v", audio, sm.offsets[len(sm.offsets)-1])
	}
	t.Logf("first audio %v after the flush, %v of audio, %d words, last at %v", firstAudio, audio, len(sm.words), sm.offsets[len(sm.offsets)-1])

	_ = s.Push("two", strings.Repeat("This answer is interrupted. ", 6))
	_ = s.Flush("two")
	for ev := range s.Events() {
		if ev.Kind == providers.TTSAudio {
			break
		}
	}
	if err := s.Cancel("two"); err != nil {
		t.Fatal(err)
	}
	for ev := range s.Events() {
		if ev.Kind == providers.TTSCancelled {
			break
		}
	}
	_ = s.Push("three", "Sure.")
	_ = s.Flush("three")
	for ev := range s.Events() {
		if ev.Kind == providers.TTSError {
			t.Fatalf("session failed after the cancel: %v", ev.Err)
		}
		if ev.ContextID == "two" {
			t.Fatalf("event %v of the cancelled context", ev.Kind)
		}
		if ev.Kind == providers.TTSFlushed {
			return
		}
	}
	t.Fatal("Events closed before the third context's Flushed")
}
