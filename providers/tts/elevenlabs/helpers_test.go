package elevenlabs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
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
	l := wsmock.NewPipeListener()
	srv := elevenlabsmock.New(wsmock.WithListener(l))
	t.Cleanup(srv.Close)
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ReplyTimeout:   testReply,
		CloseTimeout:   testClose,
		DialContext:    l.DialContext,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, srv
}

// connect opens a session closed at the end of the test.
func connect(t *testing.T, a *Adapter) providers.TTSSession {
	t.Helper()
	s, err := a.Connect(context.Background())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// next reads one event within d (virtual time in a bubble); ok is false
// when Events closed.
func next(t *testing.T, s providers.TTSSession, d time.Duration) (providers.TTSEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		return ev, ok
	case <-time.After(d):
		t.Fatalf("no event within %v", d)
		return providers.TTSEvent{}, false
	}
}

// untilFlushed reads the events of a context until its Flushed; events of
// other contexts fail the test.
func untilFlushed(t *testing.T, s providers.TTSSession, id string) []providers.TTSEvent {
	t.Helper()
	var got []providers.TTSEvent
	for {
		ev, ok := next(t, s, time.Minute)
		if !ok {
			t.Fatalf("Events closed before Flushed of %q (after %d events)", id, len(got))
		}
		if ev.Kind == providers.TTSError {
			t.Fatalf("session failed: %v", ev.Err)
		}
		if ev.ContextID != id {
			t.Fatalf("event of %q while reading %q: %+v", ev.ContextID, id, ev.Kind)
		}
		got = append(got, ev)
		if ev.Kind == providers.TTSFlushed {
			return got
		}
	}
}

// failure reads events until the error event and checks that Events
// closes right after it; it returns the error.
func failure(t *testing.T, s providers.TTSSession) error {
	t.Helper()
	for {
		ev, ok := next(t, s, time.Hour)
		if !ok {
			t.Fatal("Events closed without an error event")
		}
		if ev.Kind == providers.TTSError {
			if ev.Err == nil {
				t.Fatal("error event without Err")
			}
			if _, ok := next(t, s, time.Minute); ok {
				t.Fatal("an event followed the error event")
			}
			return ev.Err
		}
	}
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

// asType fails the test unless err is a *T.
func asType[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("error %v (%T) is not a %T", err, err, target)
	}
	return target
}
