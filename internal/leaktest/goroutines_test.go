package leaktest

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
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

// TestMembersOfADump: which goroutines of a dump belong to bubble 2.
// Mutations caught: an untagged goroutine judged by its tag alone (8 and 9
// missing), the creator rule not followed through an untagged creator (9
// missing), the state rule taken for every untagged goroutine (12
// counted), a runnable goroutine of an ended creator counted (14 counted:
// it made exact counts flaky), "bubble 2" matching "bubble 23" (13
// counted).
func TestMembersOfADump(t *testing.T) {
	dump := `goroutine 1 [chan receive]:
testing.(*T).Run(...)
	/go/src/testing/testing.go:2000 +0x1

goroutine 7 [running, synctest bubble 2]:
main.f()
	/x.go:1 +0x1
created by testing/synctest.Test in goroutine 6
	/go/src/testing/synctest/synctest.go:1 +0x1

goroutine 6 [chan receive]:
testing/synctest.Test()
created by testing.(*T).Run in goroutine 1
	/go/src/testing/testing.go:1 +0x1

goroutine 8 [runnable]:
main.alloc()
	/x.go:2 +0x1
created by main.f in goroutine 7
	/x.go:3 +0x1

goroutine 9 [select]:
main.g()
	/x.go:4 +0x1
created by main.alloc in goroutine 8
	/x.go:5 +0x1

goroutine 10 [GC assist wait]:
main.h()
	/x.go:6 +0x1
created by main.gone in goroutine 99
	/x.go:7 +0x1

goroutine 11 [runnable]:
net/http.(*conn).serve()
created by net/http.(*Server).Serve in goroutine 1
	/go/src/net/http/server.go:1 +0x1

goroutine 12 [IO wait]:
main.reader()
created by main.gone in goroutine 98
	/x.go:8 +0x1

goroutine 13 [select, synctest bubble 23]:
main.other()
created by testing/synctest.Test in goroutine 5
	/go/src/testing/synctest/synctest.go:1 +0x1

goroutine 14 [runnable]:
testing.tRunner.func1()
created by time.goFunc in goroutine 97
	/go/src/time/sleep.go:1 +0x1
`
	got := members([]byte(dump), []byte("synctest bubble 2"))
	want := Set{7: {}, 8: {}, 9: {}, 10: {}}
	if len(got) != len(want) || got.NewSince(want) != 0 {
		t.Fatalf("members %v, want %v", got, want)
	}
	if all := members([]byte(dump), nil); len(all) != 10 {
		t.Fatalf("outside a bubble: %d goroutines, want all 10", len(all))
	}
}

// TestAnAllocatingGoroutineIsNeverMissed: a goroutine of the bubble that
// allocates in a loop is in every snapshot, although the runtime takes it
// out of its bubble (and its header names none) while it helps the
// garbage collector. Mutation caught: membership by the tag alone (it was
// missing from about one snapshot in five).
func TestAnAllocatingGoroutineIsNeverMissed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stop atomic.Bool
		ids := make(chan uint64, 1)
		var sink [][]byte
		done := make(chan struct{})
		go func() {
			defer close(done)
			ids <- selfID()
			for i := 0; !stop.Load(); i++ {
				sink = append(sink[:0], make([]byte, 64<<10))
			}
		}()
		id := <-ids
		for i := range 500 {
			if _, ok := Snapshot()[id]; !ok {
				stop.Store(true)
				<-done
				t.Fatalf("snapshot %d misses the allocating goroutine", i)
			}
		}
		stop.Store(true)
		<-done
		_ = sink
	})
}

// selfID is the caller's goroutine id, from its stack header.
func selfID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	g, _ := parseGoroutine(buf, nil)
	return g.id
}

// TestSettleWaitsForAnExitingGoroutine: a goroutine past its WaitGroup's
// Done but not yet gone is not a leak once it has gone; one that never
// ends is counted, with its stack. Mutation caught: Settle returning the
// first snapshot's count (the exiting goroutine counted whenever the
// snapshot beats its exit, as TestLoopbackSendDTMF failed in CI), or
// returning 0 without looking (the blocked one missed).
func TestSettleWaitsForAnExitingGoroutine(t *testing.T) {
	base := Snapshot()
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		wg.Done()
		<-release // alive after Done, as a deferred call would keep it
	}()
	wg.Wait()
	if n := Snapshot().NewSince(base); n != 1 {
		t.Fatalf("one snapshot after Wait counts %d, want the exiting goroutine (1)", n)
	}
	time.AfterFunc(20*time.Millisecond, func() { close(release) })
	if n, stacks := Settle(base, 5*time.Second); n != 0 {
		t.Fatalf("Settle: %d left\n%s", n, stacks)
	}
	<-gone

	stop := make(chan struct{})
	go func() { <-stop }()
	defer close(stop)
	n, stacks := Settle(base, 30*time.Millisecond)
	if n != 1 || !strings.Contains(stacks, "TestSettleWaitsForAnExitingGoroutine") {
		t.Fatalf("Settle on a blocked goroutine: %d left, stacks %q", n, stacks)
	}
}
