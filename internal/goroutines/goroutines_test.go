package goroutines

import (
	"runtime"
	"testing"
	"testing/synctest"
)

// TestCountInsideABubble: inside a bubble, a goroutine started outside it
// does not count and one started inside does. Mutation caught: counting
// every goroutine (runtime.NumGoroutine) inside a bubble.
func TestCountInsideABubble(t *testing.T) {
	outside := make(chan struct{})
	done := make(chan struct{})
	go func() { <-outside; close(done) }()
	defer func() { close(outside); <-done }()
	synctest.Test(t, func(t *testing.T) {
		base := Count()
		if base >= runtime.NumGoroutine() {
			t.Fatalf("bubble count %d not below the process's %d", base, runtime.NumGoroutine())
		}
		stop := make(chan struct{})
		go func() { <-stop }()
		synctest.Wait()
		if got := Count(); got != base+1 {
			t.Fatalf("count %d after starting one, want %d", got, base+1)
		}
		close(stop)
		synctest.Wait()
		if got := Count(); got != base {
			t.Fatalf("count %d after it ended, want %d", got, base)
		}
	})
}

// TestCountOutsideABubble: outside a bubble it is the process's count.
func TestCountOutsideABubble(t *testing.T) {
	if got, want := Count(), runtime.NumGoroutine(); got != want {
		t.Fatalf("Count %d, NumGoroutine %d", got, want)
	}
}

// TestNewSinceIsNotMaskedByAnExit: one goroutine of the base ends while a
// new one starts: the counts are equal, NewSince still sees the new one.
// Mutation caught: NewSince as a difference of counts (0).
func TestNewSinceIsNotMaskedByAnExit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopOld := make(chan struct{})
		go func() { <-stopOld }()
		synctest.Wait()
		base := Snapshot()
		close(stopOld)
		stopNew := make(chan struct{})
		go func() { <-stopNew }()
		synctest.Wait()
		now := Snapshot()
		if len(now) != len(base) || now.NewSince(base) != 1 {
			t.Fatalf("counts %d -> %d, new %d; want equal counts and 1 new", len(base), len(now), now.NewSince(base))
		}
		close(stopNew)
	})
}
