package cartesia

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/cartesia/cartesiamock"
)

// Catches what the in-memory pipe hides: the real TCP dial and HTTP
// upgrade, the close handshake over a socket, and goroutines (the
// transport's, the session's three) left after Close.
func TestRealLoopbackSession(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	before := goleak.IgnoreCurrent()
	srv := cartesiamock.New()
	t.Setenv(testKeyEnv, testKey)
	a, err := New(Config{URL: srv.URL(), APIKeyEnv: testKeyEnv, SampleRate: 24000})
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
	_ = s.Push("a", "Good ")
	_ = s.Push("a", "morning.")
	_ = s.Flush("a")
	var words []string
	samples := 0
	for ev := range s.Events() {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		if ev.Kind == providers.TTSWord {
			words = append(words, ev.Word)
		}
		samples += len(ev.PCM)
		if ev.Kind == providers.TTSFlushed {
			break
		}
	}
	if !slices.Equal(words, []string{"Good", "morning."}) || samples != 9600 {
		t.Errorf("words %q, %d samples", words, samples)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	srv.Close()
	goleak.VerifyNone(t, before)
}

// TestLiveCartesia speaks two short contexts on the real service and
// checks loose things: audio at the asked rate, words with non-decreasing
// offsets, Flushed last; a cancelled context acknowledged and silent
// after the ack. It runs with BRISVOX_LIVE_TESTS=1 and CARTESIA_API_KEY
// set (CARTESIA_VOICE picks a voice; the default is the API examples').
func TestLiveCartesia(t *testing.T) {
	speechtest.SkipUnlessLive(t, DefaultAPIKeyEnv)
	a, err := New(Config{Voice: os.Getenv("CARTESIA_VOICE"), SampleRate: 16000})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	s, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Logf("connected in %v", time.Since(start))
	start = time.Now()
	_ = s.Push("one", "Hello, this is a short test ")
	_ = s.Push("one", "of streaming speech.")
	_ = s.Flush("one")
	var words []string
	var last time.Duration
	samples, first := 0, time.Duration(0)
	for ev := range s.Events() {
		if ev.Err != nil {
			t.Fatalf("session failed: %v", ev.Err)
		}
		switch ev.Kind {
		case providers.TTSAudio:
			if ev.Rate != 16000 {
				t.Fatalf("rate %d", ev.Rate)
			}
			if first == 0 {
				first = time.Since(start)
			}
			samples += len(ev.PCM)
		case providers.TTSWord:
			if ev.Offset < last {
				t.Errorf("offset %v after %v", ev.Offset, last)
			}
			last = ev.Offset
			words = append(words, ev.Word)
		}
		if ev.Kind == providers.TTSFlushed {
			break
		}
	}
	audio := time.Duration(samples) * time.Second / 16000
	t.Logf("first audio after %v; %v of audio, %d words %q", first, audio, len(words), words)
	if samples == 0 || len(words) < 5 || audio < last {
		t.Fatalf("%v of audio, words %q, last word at %v", audio, words, last)
	}
	// A cancelled context: acknowledged, then nothing of it.
	_ = s.Push("two", strings.Repeat("This sentence is long and will be cut off. ", 4))
	_ = s.Flush("two")
	for ev := range s.Events() {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		if ev.Kind == providers.TTSAudio {
			break
		}
	}
	_ = s.Cancel("two")
	acked := false
	quiet := time.After(3 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-s.Events():
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			if acked && ev.ContextID == "two" {
				t.Errorf("event after the ack: %v", ev.Kind)
			}
			acked = acked || ev.Kind == providers.TTSCancelled
		case <-quiet:
			done = true
		}
	}
	st, _ := StatsOf(s)
	t.Logf("after the cancel: acked %v, %+v", acked, st)
	if !acked {
		t.Error("no Cancelled")
	}
}
