package speechtest_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/speechtest"
)

var errBoom = errors.New("boom")

// Mutations caught: the bound ignored or taken as another (no report, or
// one at another time), a closed Events reported as an event.
func TestNext(t *testing.T) {
	t.Run("event", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var ev int
			var ok bool
			r := run(t, func(tb testing.TB) { ev, ok = speechtest.Next(tb, source[int](fill([]int{7}, false)), time.Second) })
			r.want(t, "", false)
			if ev != 7 || !ok {
				t.Errorf("got %d, %v; want 7, true", ev, ok)
			}
		})
	})
	t.Run("closed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ok := true
			r := run(t, func(tb testing.TB) { _, ok = speechtest.Next(tb, source[int](fill[int](nil, true)), time.Second) })
			r.want(t, "", false)
			if ok {
				t.Error("ok from a closed Events")
			}
		})
	})
	t.Run("nothing within the bound", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			r := run(t, func(tb testing.TB) { speechtest.Next(tb, source[int](make(chan int)), 1500*time.Millisecond) })
			r.want(t, "no event within 1.5s", true)
			if took := time.Since(start); took != 1500*time.Millisecond {
				t.Errorf("gave up after %v, want 1.5s", took)
			}
		})
	})
}

// Mutations caught (on STTFailure and the Failure it runs): an event after
// the error not looked for, the end of Events without an error taken for
// a pass, Events left open after the error not reported, the error lost.
func TestSTTFailure(t *testing.T) {
	cases := []struct {
		name   string
		events []providers.STTEvent
		closed bool
		want   string // a report; "" for none
	}{
		{"the error, then the end", []providers.STTEvent{{Text: "a"}, {Err: errBoom}}, true, ""},
		{"an event after the error", []providers.STTEvent{{Err: errBoom}, {Text: "late"}}, true, "an event followed the error event"},
		{"the end without an error", []providers.STTEvent{{Text: "a"}}, true, "Events closed without an error event"},
		{"Events left open after the error", []providers.STTEvent{{Err: errBoom}}, false, "no event within 1m0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var err error
				r := run(t, func(tb testing.TB) {
					err = speechtest.STTFailure(tb, sttSession{ch: fill(tc.events, tc.closed)})
				})
				r.want(t, tc.want, tc.want != "")
				if tc.want == "" && !errors.Is(err, errBoom) {
					t.Errorf("returned %v, want the event's error", err)
				}
			})
		})
	}
}

// Catches: the time taken when Events closed (or when Failure returns)
// instead of when the error event was read; Aura's deadline tests measure
// from it.
func TestFailureTellsWhenTheErrorCame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan providers.TTSEvent)
		go func() {
			time.Sleep(3 * time.Second)
			ch <- providers.TTSEvent{Kind: providers.TTSError, Err: errBoom}
			time.Sleep(time.Second)
			close(ch)
		}()
		start := time.Now()
		var at time.Time
		var err error
		r := run(t, func(tb testing.TB) {
			at, err = speechtest.Failure(tb, source[providers.TTSEvent](ch), func(ev providers.TTSEvent) error { return ev.Err })
		})
		r.want(t, "", false)
		if got := at.Sub(start); got != 3*time.Second || !errors.Is(err, errBoom) {
			t.Errorf("error %v at %v, want boom at 3s", err, got)
		}
	})
}

// Mutations caught: an error event of the wrong kind or without its Err
// let through, one of the two forms not taken for the error event.
func TestTTSFailure(t *testing.T) {
	cases := []struct {
		name   string
		events []providers.TTSEvent
		want   string
		fatal  bool
	}{
		{"error event", []providers.TTSEvent{{Kind: providers.TTSAudio}, {Kind: providers.TTSError, Err: errBoom}}, "", false},
		{"error kind without Err", []providers.TTSEvent{{Kind: providers.TTSError}}, "error event without Err", true},
		{"Err on another kind", []providers.TTSEvent{{Kind: providers.TTSAudio, Err: errBoom}}, "Err event of kind", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var err error
				r := run(t, func(tb testing.TB) {
					err = speechtest.TTSFailure(tb, ttsSession{ch: fill(tc.events, true)})
				})
				r.want(t, tc.want, tc.fatal)
				if !tc.fatal && !errors.Is(err, errBoom) {
					t.Errorf("returned %v, want the event's error", err)
				}
			})
		})
	}
}

// Mutations caught: the stopping event left out of the result, an error
// event (of either form) or the end of Events read past, the bound not
// passed on.
func TestTTSUntil(t *testing.T) {
	flushedA := func(ev providers.TTSEvent) bool { return ev.Kind == providers.TTSFlushed && ev.ContextID == "a" }
	cases := []struct {
		name   string
		events []providers.TTSEvent
		closed bool
		want   string
	}{
		{"up to the stop", []providers.TTSEvent{
			{Kind: providers.TTSAudio, ContextID: "a"}, {Kind: providers.TTSFlushed, ContextID: "b"}, {Kind: providers.TTSFlushed, ContextID: "a"},
			{Kind: providers.TTSAudio, ContextID: "c"},
		}, false, ""},
		{"error event", []providers.TTSEvent{{Kind: providers.TTSError, Err: errBoom}}, false, "session failed: boom"},
		{"Err on an audio event", []providers.TTSEvent{{Kind: providers.TTSAudio, Err: errBoom}}, false, "session failed: boom"},
		{"the end first", []providers.TTSEvent{{Kind: providers.TTSAudio, ContextID: "a"}}, true, "Events closed after 1 events"},
		{"nothing within the bound", nil, false, "no event within 2s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var got []providers.TTSEvent
				r := run(t, func(tb testing.TB) {
					got = speechtest.TTSUntil(tb, ttsSession{ch: fill(tc.events, tc.closed)}, 2*time.Second, flushedA)
				})
				r.want(t, tc.want, tc.want != "")
				if tc.want == "" && !slices.EqualFunc(got, tc.events[:3], func(a, b providers.TTSEvent) bool {
					return a.Kind == b.Kind && a.ContextID == b.ContextID
				}) {
					t.Errorf("got %+v, want the first three events", got)
				}
			})
		})
	}
}
