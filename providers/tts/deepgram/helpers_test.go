package aura

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/tts/deepgram/auramock"
)

const (
	testKeyEnv = "BRISVOX_TEST_AURA_KEY"
	testKey    = "dg-test-SECRET"

	testConnect = 2 * time.Second
	testReply   = 3 * time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *auramock.Server) {
	t.Helper()
	l := wsmock.NewPipeListener()
	srv := auramock.New(wsmock.WithListener(l))
	t.Cleanup(srv.Close)
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ReplyTimeout:   testReply,
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

// spoken is what a context delivered up to its Flushed.
type spoken struct {
	samples []int16
	frames  int
}

// untilFlushed reads the events of id up to its Flushed; any other event
// fails the test.
func untilFlushed(t *testing.T, s providers.TTSSession, id string) spoken {
	t.Helper()
	var sp spoken
	for {
		ev, ok := next(t, s, time.Minute)
		switch {
		case !ok:
			t.Fatalf("Events closed before the Flushed of %q", id)
		case ev.Err != nil:
			t.Fatalf("before the Flushed of %q: %v", id, ev.Err)
		case ev.ContextID != id:
			t.Fatalf("an event (kind %d) of %q before the Flushed of %q", ev.Kind, ev.ContextID, id)
		case ev.Kind == providers.TTSFlushed:
			return sp
		case ev.Kind != providers.TTSAudio:
			t.Fatalf("an event of kind %d while %q speaks", ev.Kind, id)
		case ev.Rate != DefaultSampleRate:
			t.Fatalf("rate %d", ev.Rate)
		}
		sp.samples = append(sp.samples, ev.PCM...)
		sp.frames++
	}
}

// failure reads events until the Err event and checks that Events closes
// right after it; it returns the error and when it came.
func failure(t *testing.T, s providers.TTSSession) (time.Time, error) {
	t.Helper()
	for {
		ev, ok := next(t, s, time.Hour)
		if !ok {
			t.Fatal("Events closed without an Err event")
		}
		if ev.Err != nil {
			at := time.Now()
			if _, ok := next(t, s, time.Minute); ok {
				t.Fatal("an event followed the Err event")
			}
			return at, ev.Err
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

// types lists the types of the client messages the mock read.
func types(srv *auramock.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if r.Malformed {
			out = append(out, "malformed")
			continue
		}
		out = append(out, r.Type)
	}
	return out
}

// wordSamples is the number of samples of one word of the mock.
func wordSamples(rate int, d time.Duration) int {
	return int(int64(rate) * int64(d) / int64(time.Second))
}
