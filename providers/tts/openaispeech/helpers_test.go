package openaispeech

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/llm/openai/openaimock"
	"github.com/brisvox/brisvox/providers/tts/openaispeech/speechmock"
)

const (
	testKeyEnv = "BRISVOX_TEST_OPENAISPEECH_KEY"
	testKey    = "sk-test-SPEECH-SECRET"
	// testTimeout is every deadline of the adapters under test.
	testTimeout = 2 * time.Second
	// wordPace is the mock's real-time pace: one 40 ms word per 40 ms.
	wordPace = 40 * time.Millisecond
)

// rig is an adapter on a mock over an in-memory listener, made inside a
// synctest bubble; both are closed at the end of the test.
type rig struct {
	t   *testing.T
	srv *speechmock.Server
	a   *Adapter
}

// newRig builds the rig; mutate changes the config before New.
func newRig(t *testing.T, def speechmock.Response, mutate func(*Config)) *rig {
	t.Helper()
	t.Setenv(testKeyEnv, testKey)
	l := openaimock.NewPipeListener()
	srv := speechmock.NewWithListener(l, def)
	cfg := OpenAI("tts-1", "alloy")
	cfg.BaseURL, cfg.APIKeyEnv, cfg.DialContext = srv.URL(), testKeyEnv, l.DialContext
	cfg = cfg.WithIOTimeout(testTimeout)
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = a.Close()
		srv.Close()
	})
	return &rig{t: t, srv: srv, a: a}
}

// connect opens a session closed at the end of the test.
func (r *rig) connect(ctx context.Context) providers.TTSSession {
	r.t.Helper()
	s, err := r.a.Connect(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = s.Close() })
	return s
}

// next reads one event, failing the test when none comes within a minute
// of virtual time or Events is closed.
func next(t *testing.T, s providers.TTSSession) providers.TTSEvent {
	t.Helper()
	ev, ok := speechtest.Next(t, s, time.Minute)
	if !ok {
		t.Fatal("events closed")
	}
	return ev
}

// spoken is what a run of events said: the words of the audio (one per
// run of equal samples, checked against the mock's word values), and the
// event that ended the run.
type spoken struct {
	words   []string
	samples int
	rate    int
	audio   int // Audio events
	last    providers.TTSEvent
}

// untilEnd reads events of ctxID until its Flushed, an Error or a
// Cancelled; vocabulary names the words that may be heard.
func untilEnd(t *testing.T, s providers.TTSSession, ctxID string, vocabulary string) spoken {
	t.Helper()
	byValue := map[int16]string{}
	for _, w := range strings.Fields(vocabulary) {
		byValue[speechmock.WordSample(w)] = w
	}
	var sp spoken
	var run int16
	for {
		ev := next(t, s)
		if ev.ContextID != ctxID {
			t.Fatalf("event %+v of another context", ev)
		}
		switch ev.Kind {
		case providers.TTSAudio:
			sp.audio++
			sp.rate = ev.Rate
			sp.samples += len(ev.PCM)
			for _, v := range ev.PCM {
				if v == run {
					continue
				}
				run = v
				w, ok := byValue[v]
				if !ok {
					t.Fatalf("sample %d is no word's", v)
				}
				sp.words = append(sp.words, w)
			}
		case providers.TTSWord:
			t.Fatalf("a Word event from an adapter without word timings: %+v", ev)
		default:
			sp.last = ev
			return sp
		}
	}
}

// leakCheck fails the test when the bubble holds more goroutines at its
// end than at the start (after the rig's cleanup).
func leakCheck(t *testing.T) {
	t.Helper()
	base := leaktest.Count()
	t.Cleanup(func() {
		// Cleanups run last-in first-out: this one runs after the rig's.
		synctest.Wait()
		if leaktest.Count() <= base {
			return
		}
		t.Errorf("goroutines: %d at the end, %d at the start", leaktest.Count(), base)
	})
}
