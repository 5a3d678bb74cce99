package loose

import (
	"runtime"
	"testing"
	"testing/synctest"
)

// TestCountGoroutinesInBubble: in a bubble, exactly the bubble's
// goroutines count, whatever runs outside it.
// Mutation caught (seen failing): counting all goroutines
// (runtime.NumGoroutine) in a bubble.
func TestCountGoroutinesInBubble(t *testing.T) {
	outside := make(chan struct{})
	go func() { <-outside }()
	defer close(outside)
	synctest.Test(t, func(t *testing.T) {
		base := countGoroutines()
		if all := runtime.NumGoroutine(); base < 1 || base >= all {
			t.Fatalf("bubble count %d, all %d", base, all)
		}
		stop := make(chan struct{})
		go func() { <-stop }()
		synctest.Wait()
		if n := countGoroutines(); n != base+1 {
			t.Fatalf("with one more goroutine: %d, want %d", n, base+1)
		}
		close(stop)
		synctest.Wait()
		if n := countGoroutines(); n != base {
			t.Fatalf("after it ended: %d, want %d", n, base)
		}
	})
}
