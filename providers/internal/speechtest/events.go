package speechtest

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// Source is a session's stream of events: a providers.STTSession is a
// Source of STTEvent, a providers.TTSSession one of TTSEvent.
type Source[E any] interface {
	Events() <-chan E
}

// Next reads one event within d (virtual time inside a bubble); ok is
// false when Events is closed. No event within d fails the test.
func Next[E any](t testing.TB, s Source[E], d time.Duration) (ev E, ok bool) {
	t.Helper()
	select {
	case ev, ok = <-s.Events():
		return ev, ok
	case <-time.After(d):
		t.Fatalf("no event within %v", d)
		return ev, false
	}
}

// Failure reads events until the first whose errOf is not nil and checks
// that Events closes right after it (within a minute, and nothing in
// between); it returns that error and when its event was read. Events
// closing first fails the test, as does a wait of over an hour for an
// event; the events before the failure are passed over.
func Failure[E any](t testing.TB, s Source[E], errOf func(E) error) (time.Time, error) {
	t.Helper()
	for {
		ev, ok := Next(t, s, time.Hour)
		if !ok {
			t.Fatal("Events closed without an error event")
		}
		if err := errOf(ev); err != nil {
			at := time.Now()
			if _, ok := Next(t, s, time.Minute); ok {
				t.Fatal("an event followed the error event")
			}
			return at, err
		}
	}
}

// STTFailure is Failure of an STT session, whose error event is the one
// with an Err.
func STTFailure(t testing.TB, s providers.STTSession) error {
	t.Helper()
	_, err := Failure(t, s, func(ev providers.STTEvent) error { return ev.Err })
	return err
}

// TTSFailure is Failure of a TTS session, whose error event is the first
// of kind TTSError or with an Err; it must be both.
func TTSFailure(t testing.TB, s providers.TTSSession) error {
	t.Helper()
	_, err := Failure(t, s, func(ev providers.TTSEvent) error {
		t.Helper()
		if !isTTSError(ev) {
			return nil
		}
		if ev.Kind != providers.TTSError {
			t.Errorf("Err event of kind %v", ev.Kind)
		}
		if ev.Err == nil {
			t.Fatal("error event without Err")
		}
		return ev.Err
	})
	return err
}

// TTSUntil reads events until stop reports true and returns them, that
// last one included. Each must come within d (virtual time); an error
// event (of kind TTSError or with an Err) or the end of Events fails the
// test. stop may fail the test itself on an event it does not expect.
func TTSUntil(t testing.TB, s providers.TTSSession, d time.Duration, stop func(providers.TTSEvent) bool) []providers.TTSEvent {
	t.Helper()
	var got []providers.TTSEvent
	for {
		ev, ok := Next(t, s, d)
		if !ok {
			t.Fatalf("Events closed after %d events", len(got))
		}
		if isTTSError(ev) {
			t.Fatalf("session failed: %v", ev.Err)
		}
		got = append(got, ev)
		if stop(ev) {
			return got
		}
	}
}

// isTTSError reports whether ev says the session failed.
func isTTSError(ev providers.TTSEvent) bool {
	return ev.Kind == providers.TTSError || ev.Err != nil
}
