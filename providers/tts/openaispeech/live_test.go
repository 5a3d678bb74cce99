package openaispeech

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/openaispeech/speechmock"
)

// liveBudget bounds a whole live run.
const liveBudget = 2 * time.Minute

// liveReport is what a live run measured: counts and times only.
type liveReport struct {
	firstAudio time.Duration // push to the first audio
	audio      time.Duration // audio of the flushed context
	events     int
	cancelAck  time.Duration // cancel to its ack
}

// liveRun holds an adapter to the loose assertions a real service must
// meet: Warm works; two pieces and a flush give PCM16 audio at a sane rate
// (at least half a second of it), no Word event, Flushed last; a cancel
// after the first audio of a long text is acknowledged within a second with
// no audio of the context after the ack; the next context is served.
func liveRun(ctx context.Context, t *testing.T, a *Adapter) liveReport {
	t.Helper()
	var rep liveReport
	if err := a.Warm(ctx); err != nil {
		t.Fatalf("warm: %v", err)
	}
	s, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recv := func() providers.TTSEvent { return speechtest.NextWithoutWords(ctx, t, s) }
	start := time.Now()
	_ = s.Push("one", "Hello, this is a test of streamed speech. ")
	_ = s.Push("one", "And this is its second piece.")
	_ = s.Flush("one")
	for {
		ev := recv()
		rep.events++
		if ev.ContextID != "one" {
			t.Fatalf("event of context %q", ev.ContextID)
		}
		if ev.Kind == providers.TTSFlushed {
			break
		}
		if ev.Kind != providers.TTSAudio || ev.Rate < 8000 || ev.Rate > 48000 {
			t.Fatalf("event %v at rate %d", ev.Kind, ev.Rate)
		}
		if rep.firstAudio == 0 {
			rep.firstAudio = time.Since(start)
		}
		rep.audio += time.Duration(len(ev.PCM)) * time.Second / time.Duration(ev.Rate)
	}
	if rep.audio < 500*time.Millisecond {
		t.Fatalf("only %v of audio", rep.audio)
	}

	_ = s.Push("two", "This is a long answer that the caller will interrupt: one, two, three, four, five, six, seven, eight, nine, ten.")
	if ev := recv(); ev.Kind != providers.TTSAudio || ev.ContextID != "two" {
		t.Fatalf("%+v", ev)
	}
	at := time.Now()
	_ = s.Cancel("two")
	for {
		ev := recv()
		if ev.ContextID != "two" {
			t.Fatalf("event of context %q before the ack", ev.ContextID)
		}
		if ev.Kind == providers.TTSCancelled {
			break
		}
	}
	if rep.cancelAck = time.Since(at); rep.cancelAck > time.Second {
		t.Fatalf("ack after %v", rep.cancelAck)
	}
	_ = s.Push("three", "Done.")
	_ = s.Flush("three")
	for {
		ev := recv()
		if ev.ContextID != "three" {
			t.Fatalf("event of context %q after the ack", ev.ContextID)
		}
		if ev.Kind == providers.TTSFlushed {
			break
		}
	}
	return rep
}

// TestLive runs liveRun against OpenAI (the key in OPENAI_API_KEY, the
// model in BRISVOX_OPENAI_TTS_MODEL, default gpt-4o-mini-tts) and against
// a local OpenAI-compatible server (BRISVOX_LOCAL_SPEECH_URL, its model
// and voice in BRISVOX_LOCAL_SPEECH_MODEL and _VOICE), each only with
// BRISVOX_LIVE_TESTS=1, skipped with a message otherwise. Only counts and
// times are logged.
func TestLive(t *testing.T) {
	cases := []struct {
		name, gate string
		cfg        func() Config
	}{
		{"openai", "OPENAI_API_KEY", func() Config {
			return OpenAI(envOr("BRISVOX_OPENAI_TTS_MODEL", "gpt-4o-mini-tts"), envOr("BRISVOX_OPENAI_TTS_VOICE", "alloy"))
		}},
		{"local", "BRISVOX_LOCAL_SPEECH_URL", func() Config {
			return Local(os.Getenv("BRISVOX_LOCAL_SPEECH_URL"), envOr("BRISVOX_LOCAL_SPEECH_MODEL", "kokoro"),
				envOr("BRISVOX_LOCAL_SPEECH_VOICE", "af_heart"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			speechtest.SkipUnlessLive(t, c.gate)
			a, err := New(c.cfg())
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			ctx, cancel := context.WithTimeout(t.Context(), liveBudget)
			defer cancel()
			rep := liveRun(ctx, t, a)
			t.Logf("first audio after %v, %v of audio in %d events, cancel acknowledged after %v",
				rep.firstAudio, rep.audio, rep.events, rep.cancelAck)
		})
	}
}

// TestLiveAssertionsOverMock runs liveRun over the mock on a loopback
// socket in real time, paced like a synthesizer, so the loose assertions
// are known to hold before a key is involved.
func TestLiveAssertionsOverMock(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback-socket test (skipped under -short)")
	}
	t.Setenv(testKeyEnv, testKey)
	srv := speechmock.New(speechmock.Response{Pace: 5 * time.Millisecond})
	defer srv.Close()
	cfg := OpenAI("tts-1", "alloy")
	cfg.BaseURL, cfg.APIKeyEnv = srv.URL(), testKeyEnv
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(t.Context(), liveBudget)
	defer cancel()
	rep := liveRun(ctx, t, a)
	if rep.audio != 14*40*time.Millisecond {
		t.Fatalf("%v of audio for 14 words", rep.audio)
	}
}

// envOr is the environment variable k, or def when it is unset or empty.
func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
