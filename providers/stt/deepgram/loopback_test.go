package deepgram

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/stt/deepgram/deepgrammock"
)

// Catches what the in-memory pipe hides: the real TCP dial and HTTP
// upgrade, the close handshake over a socket, and goroutines (the
// transport's, the session's) left after Close.
func TestRealLoopbackSession(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	before := goleak.IgnoreCurrent()
	srv := deepgrammock.New()
	t.Setenv(testKeyEnv, testKey)
	a, err := New(Config{URL: srv.URL(), APIKeyEnv: testKeyEnv, ConnectTimeout: 5 * time.Second, ResultTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv.ScriptText("good morning")
	if err := a.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := a.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.SendAudio(frame(320, 0)); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Finalize()
	var got []providers.STTEvent
	for ev := range s.Events() {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		got = append(got, ev)
		if ev.FromFinalize {
			break
		}
	}
	if len(got) != 3 || got[2].Text != "good morning" || !got[2].Final {
		t.Fatalf("events %+v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	srv.Close()
	if c := srv.Controls(); c[len(c)-1] != "CloseStream" {
		t.Errorf("controls %v", c)
	}
	goleak.VerifyNone(t, before)
}

// TestLiveDeepgram streams the English speech fixture to the real service
// and checks loose things: a non-empty final arrives, nothing fails. It
// runs with BRISVOX_LIVE_TESTS=1 and DEEPGRAM_API_KEY set.
func TestLiveDeepgram(t *testing.T) {
	speechtest.SkipUnlessLive(t, DefaultAPIKeyEnv)
	wav := liveFixture(t, "en")
	a, err := New(Config{SampleRate: wav.Rate, Language: "en", Punctuate: true, Endpointing: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	frameLen := wav.Rate / 50 // 20 ms
	fed := make(chan struct{})
	defer func() { cancel(); <-fed }()
	go func() {
		defer close(fed)
		// Real time, as a call sends it; ends with the session.
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < len(wav.Samples); i += frameLen {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
			if s.SendAudio(wav.Samples[i:min(i+frameLen, len(wav.Samples))]) != nil {
				return
			}
		}
		_ = s.Finalize()
	}()
	var finals []string
	deadline := time.After(wav.Duration() + 15*time.Second)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatal("session ended early")
			}
			if ev.Err != nil {
				t.Fatalf("session failed: %v", ev.Err)
			}
			if ev.Final && strings.TrimSpace(ev.Text) != "" {
				finals = append(finals, ev.Text)
			}
			if ev.FromFinalize {
				if len(finals) == 0 {
					t.Fatal("no non-empty final for the fixture")
				}
				t.Logf("%d finals, %d characters", len(finals), len(strings.Join(finals, " ")))
				return
			}
		case <-deadline:
			if len(finals) == 0 {
				t.Fatal("no non-empty final within the fixture's length plus 15 s")
			}
			return
		}
	}
}

// liveFixture loads .native/fixtures/<name>.wav under the module root.
func liveFixture(t *testing.T, name string) *media.WAV {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
	f, err := os.Open(filepath.Join(dir, ".native", "fixtures", name+".wav"))
	if err != nil {
		t.Skipf("speech fixture missing (run `go tool task setup`): %v", err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
