package trunk

import (
	"errors"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
)

func TestAcquire(t *testing.T) {
	p := newPolicy(t, Config{Allow: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}, MaxDialogsPerSource: 2})
	a, b := ap("192.0.2.1:5060"), ap("192.0.2.2:5060")
	rel1, err := p.Acquire(a)
	if err != nil {
		t.Fatal(err)
	}
	rel2, err := p.Acquire(ap("192.0.2.1:5070")) // another port, the same source
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(a); !errors.Is(err, ErrTooManyDialogs) {
		t.Fatalf("third dialog: %v", err)
	}
	if rel, err := p.Acquire(b); err != nil {
		t.Fatalf("another source: %v", err)
	} else {
		rel()
	}
	if _, err := p.Acquire(ap("198.51.100.1:5060")); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("outside the allowlist: %v", err)
	}
	rel1()
	// Mutation: a release that counts every call frees two slots here,
	// and the limit is then exceeded below.
	rel1()
	rel3, err := p.Acquire(a)
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if _, err := p.Acquire(a); !errors.Is(err, ErrTooManyDialogs) {
		t.Fatalf("a double release freed two slots: %v", err)
	}
	st := p.Stats()
	if st[StatDialogsOpen] != 2 || st[StatDialogsRefused] != 3 {
		t.Fatalf("stats %v", st)
	}
	rel2()
	rel3()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.dialogs) != 0 {
		t.Fatalf("dialog table holds %d sources after every release", len(p.dialogs))
	}
}

// Acquire and release race from many goroutines: the limit holds at
// every moment and everything is given back.
func TestAcquireConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		const limit = 5
		p := newPolicy(t, Config{MaxDialogsPerSource: limit})
		src := ap("192.0.2.1:5060")
		var (
			mu        sync.Mutex
			held, top int
			wg        sync.WaitGroup
		)
		for range 16 {
			wg.Go(func() {
				for range 500 {
					rel, err := p.Acquire(src)
					if err != nil {
						continue
					}
					mu.Lock()
					held++
					top = max(top, held)
					mu.Unlock()
					runtime.Gosched() // hold the dialog while others try
					mu.Lock()
					held--
					mu.Unlock()
					rel()
					rel()
				}
			})
		}
		wg.Wait()
		synctest.Wait() // the goroutines wg.Go started have returned
		if top > limit {
			t.Fatalf("%d dialogs held at once, limit %d", top, limit)
		}
		if n := p.Stats()[StatDialogsOpen]; n != 0 {
			t.Fatalf("%d dialogs open at the end", n)
		}
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left", n)
		}
	})
}
