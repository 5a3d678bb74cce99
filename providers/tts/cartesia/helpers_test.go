package cartesia

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/tts/cartesia/cartesiamock"
)

const (
	testKeyEnv = "BRISVOX_TEST_CARTESIA_KEY"
	testKey    = "sk_car_test-SECRET"

	testConnect = 2 * time.Second
	testReply   = 3 * time.Second
	testClose   = time.Second
)

// newPipe starts a mock on an in-memory listener and an adapter dialing
// it; it must run inside a testing/synctest bubble. Both are closed at the
// end of the test.
func newPipe(t *testing.T, mutate func(*Config)) (*Adapter, *cartesiamock.Server) {
	t.Helper()
	l := wsmock.NewPipeListener()
	srv := cartesiamock.New(wsmock.WithListener(l))
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

// until reads events until one of kind for ctx (returned, with the events
// before it); an Err event or the end of Events fails the test.
func until(t *testing.T, s providers.TTSSession, kind providers.TTSEventKind, ctx string) []providers.TTSEvent {
	t.Helper()
	var got []providers.TTSEvent
	for {
		ev, ok := next(t, s, 10*time.Second)
		if !ok {
			t.Fatalf("Events closed after %d events", len(got))
		}
		if ev.Err != nil {
			t.Fatalf("session failed: %v", ev.Err)
		}
		got = append(got, ev)
		if ev.Kind == kind && ev.ContextID == ctx {
			return got
		}
	}
}

// failure reads events until the Err event and checks that Events closes
// right after it; it returns the error.
func failure(t *testing.T, s providers.TTSSession) error {
	t.Helper()
	for {
		ev, ok := next(t, s, time.Hour)
		if !ok {
			t.Fatal("Events closed without an Err event")
		}
		if ev.Err != nil {
			if ev.Kind != providers.TTSError {
				t.Errorf("Err event of kind %v", ev.Kind)
			}
			if _, ok := next(t, s, time.Minute); ok {
				t.Fatal("an event followed the Err event")
			}
			return ev.Err
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

// summary is what a run of events says: the words in order, their
// offsets, the samples of audio, per kind counts.
type summary struct {
	words   []string
	offsets []time.Duration
	samples int
	rates   map[int]bool
	flushed int
}

func summarize(evs []providers.TTSEvent) summary {
	sum := summary{rates: map[int]bool{}}
	for _, ev := range evs {
		switch ev.Kind {
		case providers.TTSWord:
			sum.words = append(sum.words, ev.Word)
			sum.offsets = append(sum.offsets, ev.Offset)
		case providers.TTSAudio:
			sum.samples += len(ev.PCM)
			sum.rates[ev.Rate] = true
		case providers.TTSFlushed:
			sum.flushed++
		}
	}
	return sum
}
