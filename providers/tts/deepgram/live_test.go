package aura

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/deepgram/auramock"
)

// liveBudget bounds a whole live run.
const liveBudget = 2 * time.Minute

// liveRun holds an adapter to the loose assertions a real service must
// meet, under PerTurn: Warm works; two pieces with a pause of 3 s between
// them (the probe must get pongs: a service that answers no ping would end
// the session) and a Flush give PCM16 audio (at least half a second), no
// Word event, Flushed last; a cancel after the first audio of a long text
// is acknowledged at once with no audio of it after the ack; the next
// context is served. It logs counts and times only.
func liveRun(ctx context.Context, t *testing.T, a *Adapter) {
	t.Helper()
	if err := a.Warm(ctx); err != nil {
		t.Fatalf("warm: %v", err)
	}
	s, err := a.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recv := func() providers.TTSEvent { return speechtest.NextWithoutWords(ctx, t, s) }
	_ = s.Push("one", "Hello, this is a test of streamed speech. ")
	time.Sleep(3 * time.Second) // a slow LLM: the text is held, the probe pings
	_ = s.Push("one", "And this is its second piece.")
	flushAt := time.Now()
	_ = s.Flush("one")
	var audio time.Duration
	var first time.Duration
	for {
		ev := recv()
		if ev.ContextID != "one" {
			t.Fatalf("an event of %q", ev.ContextID)
		}
		if ev.Kind == providers.TTSFlushed {
			break
		}
		if ev.Kind == providers.TTSAudio {
			if first == 0 {
				first = time.Since(flushAt)
			}
			audio += time.Duration(len(ev.PCM)) * time.Second / time.Duration(ev.Rate)
		}
	}
	if audio < 500*time.Millisecond {
		t.Errorf("%v of audio", audio)
	}
	st, _ := StatsOf(s)
	if st.Pongs == 0 {
		t.Errorf("no pong in 3 s of held text: %+v", st)
	}
	_ = s.Push("two", "This is a much longer answer that the caller will interrupt before it ends, so the rest of it must never be heard.")
	_ = s.Flush("two")
	for recv().Kind != providers.TTSAudio {
	}
	cancelAt := time.Now()
	_ = s.Cancel("two")
	for {
		ev := recv()
		if ev.Kind == providers.TTSCancelled {
			break
		}
	}
	ack := time.Since(cancelAt)
	_ = s.Push("three", "The next answer.")
	_ = s.Flush("three")
	var next time.Duration
	for {
		ev := recv()
		if ev.ContextID == "two" {
			t.Fatalf("an event of the cancelled context after its ack")
		}
		if ev.Kind == providers.TTSAudio {
			next += time.Duration(len(ev.PCM)) * time.Second / time.Duration(ev.Rate)
		}
		if ev.Kind == providers.TTSFlushed {
			break
		}
	}
	if next == 0 {
		t.Error("no audio after the cancel")
	}
	st, _ = StatsOf(s)
	t.Logf("first audio %v after the flush, %v of audio, cancel ack %v, next context %v of audio, stats %+v", first, audio, ack, next, st)
}

// The loose assertions hold over the mock (virtual time), so a live
// failure is the service's or the adapter's, not the assertions'.
func TestLiveAssertionsOverTheMock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, srv := newPipe(t, nil)
		srv.SetVoice(auramock.Voice{WordDuration: 100 * time.Millisecond, ChunksPerWord: 2, Pace: 40 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), liveBudget)
		defer cancel()
		liveRun(ctx, t, a)
	})
}

// TestLive runs the loose assertions against the real service with
// BRISVOX_LIVE_TESTS=1 and the key in DEEPGRAM_API_KEY.
func TestLive(t *testing.T) {
	speechtest.SkipUnlessLive(t, DefaultAPIKeyEnv)
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), liveBudget)
	defer cancel()
	liveRun(ctx, t, a)
}
