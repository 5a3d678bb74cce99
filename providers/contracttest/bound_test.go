package contracttest

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// A call that hangs is reported as ErrHang after the bound, aborted, and
// a late result goes to drop. Mutation caught: not calling abort leaves
// the call running (the bubble would deadlock) and drop is never called.
func TestCallBoundedReportsAHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		abort := make(chan struct{})
		dropped := 0
		start := time.Now()
		_, err := callBounded("Stream (test)", time.Second,
			func() (int, error) { <-abort; return 7, nil },
			func() { close(abort) },
			func(v int) { dropped = v })
		if !errors.Is(err, ErrHang) {
			t.Fatalf("err %v, want ErrHang", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("reported after %v, want 1s", got)
		}
		if dropped != 7 {
			t.Errorf("late result %d handed to drop, want 7", dropped)
		}
	})
}

// A panic in the provider becomes the call's error, not a crash.
func TestCallBoundedRecoversAPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := callBounded("Warm (test)", time.Second, func() (int, error) { panic("boom") }, nil, nil)
		if err == nil {
			t.Fatal("no error for a panicking call")
		}
	})
}

// A Connect that answers (nil, nil) after the suite gave up on it is
// reported as the hang it was, not a panic on closing the late nil.
// Mutation caught: the late session closed without the nil check (the
// test binary panics: nil pointer dereference).
func TestOpenHandleLateNilSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSuite(t.Context(), Config{}, time.Second)
		_, err := openHandle(&s, "Connect", "session", "late nil", func(ctx context.Context) (providers.STTSession, error) {
			<-ctx.Done()
			return nil, nil
		})
		if !errors.Is(err, ErrHang) {
			t.Fatalf("err %v, want ErrHang", err)
		}
	})
}
