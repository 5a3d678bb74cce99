package contract

import (
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// countGoroutines must see exactly the bubble's goroutines (the test's
// and synctest's own two). Mutation caught: counting process-wide
// (runtime.NumGoroutine) counts the test runner's goroutines outside the
// bubble too.
func TestCountGoroutinesCountsTheBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := countGoroutines()
		if all := runtime.NumGoroutine(); base >= all || base < 1 {
			t.Fatalf("bubble count %d, process count %d: the bubble is not told apart", base, all)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { <-stop; close(done) }()
		synctest.Wait()
		if n := countGoroutines(); n != base+1 {
			t.Fatalf("with one more goroutine: %d, want %d", n, base+1)
		}
		close(stop)
		<-done
	})
}

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
