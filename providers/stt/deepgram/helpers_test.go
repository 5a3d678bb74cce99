package deepgram

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/stt/deepgram/deepgrammock"
)

const (
	testKeyEnv = "BRISVOX_TEST_DEEPGRAM_KEY"
	testKey    = "dg-test-SECRET"

	testConnect = 2 * time.Second
	testResult  = 3 * time.Second
	testClose   = time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *deepgrammock.Server) {
	t.Helper()
	l := wsmock.NewPipeListener()
	srv := deepgrammock.New(wsmock.WithListener(l))
	t.Cleanup(srv.Close)
	t.Setenv(testKeyEnv, testKey)
	cfg := Config{
		URL:            srv.URL(),
		APIKeyEnv:      testKeyEnv,
		ConnectTimeout: testConnect,
		ResultTimeout:  testResult,
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
func connect(t *testing.T, a *Adapter) providers.STTSession {
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
func next(t *testing.T, s providers.STTSession, d time.Duration) (providers.STTEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		return ev, ok
	case <-time.After(d):
		t.Fatalf("no event within %v", d)
		return providers.STTEvent{}, false
	}
}

// failure reads events until the Err event and checks that Events closes
// right after it; it returns the error.
func failure(t *testing.T, s providers.STTSession) error {
	t.Helper()
	for {
		ev, ok := next(t, s, time.Hour)
		if !ok {
			t.Fatal("Events closed without an Err event")
		}
		if ev.Err != nil {
			if _, ok := next(t, s, time.Minute); ok {
				t.Fatal("an event followed the Err event")
			}
			return ev.Err
		}
	}
}

// frame is n samples of a ramp starting at v.
func frame(n int, v int16) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = v + int16(i)
	}
	return pcm
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
