package elevenlabs

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/tts/elevenlabs/elevenlabsmock"
)

const (
	testKeyEnv = "BRISVOX_TEST_ELEVENLABS_KEY"
	testKey    = "xi-test-SECRET"

	testConnect = 2 * time.Second
	testReply   = 3 * time.Second
	testClose   = time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *elevenlabsmock.Server) {
	t.Helper()
	srv, dial := speechtest.Pipe(t, elevenlabsmock.New)
	t.Setenv(testKeyEnv, testKey)
	a := speechtest.NewAdapter(t, New, Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ReplyTimeout:   testReply,
		CloseTimeout:   testClose,
		DialContext:    dial,
	}, mutate)
	return a, srv
}

// untilFlushed reads the events of a context until its Flushed; events of
// other contexts fail the test.
func untilFlushed(t *testing.T, s providers.TTSSession, id string) []providers.TTSEvent {
	t.Helper()
	return speechtest.TTSUntil(t, s, time.Minute, func(ev providers.TTSEvent) bool {
		if ev.ContextID != id {
			t.Fatalf("event of %q while reading %q: %+v", ev.ContextID, id, ev.Kind)
		}
		return ev.Kind == providers.TTSFlushed
	})
}

// summary is what a context's events say: its words and offsets, its
// samples, and whether Flushed came last.
type summary struct {
	words   []string
	offsets []time.Duration
	pcm     []int16
	flushed bool
}

func summarize(t *testing.T, evs []providers.TTSEvent, rate int) summary {
	t.Helper()
	var sm summary
	for i, ev := range evs {
		switch ev.Kind {
		case providers.TTSWord:
			sm.words = append(sm.words, ev.Word)
			sm.offsets = append(sm.offsets, ev.Offset)
		case providers.TTSAudio:
			if ev.Rate != rate {
				t.Errorf("audio at %d Hz, want %d", ev.Rate, rate)
			}
			sm.pcm = append(sm.pcm, ev.PCM...)
		case providers.TTSFlushed:
			if i != len(evs)-1 {
				t.Error("an event followed Flushed")
			}
			sm.flushed = true
		default:
			t.Errorf("unexpected event kind %v", ev.Kind)
		}
	}
	return sm
}

// wantRamp checks that pcm is the mock's samples from 0.
func wantRamp(t *testing.T, pcm []int16) {
	t.Helper()
	for i, v := range pcm {
		if v != elevenlabsmock.Sample(i) {
			t.Fatalf("sample %d is %d, want %d (of %d samples)", i, v, elevenlabsmock.Sample(i), len(pcm))
		}
	}
}
