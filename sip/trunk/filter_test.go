package trunk

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
)

func TestAllowlist(t *testing.T) {
	allow := []netip.Prefix{
		netip.MustParsePrefix("192.0.2.0/24"),
		netip.MustParsePrefix("2001:db8::/32"),
		netip.MustParsePrefix("10.1.2.3/32"),
	}
	tests := []struct {
		src  string
		want Verdict
	}{
		{"192.0.2.10:5060", Pass},
		{"192.0.3.10:5060", DropNotAllowed},
		{"10.1.2.3:5060", Pass},
		{"10.1.2.4:5060", DropNotAllowed},
		// Mutation: matching the mapped address as IPv6 refuses it.
		{"[::ffff:192.0.2.10]:5060", Pass},
		{"[::ffff:192.0.3.10]:5060", DropNotAllowed},
		{"[2001:db8::1]:5060", Pass},
		// Mutation: keeping the zone makes Prefix.Contains refuse it.
		{"[2001:db8::1%eth0]:5060", Pass},
		{"[2001:db9::1]:5060", DropNotAllowed},
		// An IPv4 prefix does not admit an IPv6 address with the same bits.
		{"[c000:20a::]:5060", DropNotAllowed},
		{"[::]:5060", DropNotAllowed},
	}
	p := newPolicy(t, Config{Allow: allow})
	msg := invite("", "")
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			if got := p.Filter(ap(tc.src), msg, t0); got != tc.want {
				t.Fatalf("Filter = %v, want %v", got, tc.want)
			}
		})
	}
}

// A source outside the allowlist grows no state, and the check allocates
// nothing.
func TestNotAllowedGrowsNothing(t *testing.T) {
	p := newPolicy(t, Config{Allow: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	msg := invite("User-Agent: friendly-scanner\r\n", "")
	for i := range 1000 {
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 5060)
		if v := p.Filter(src, msg, t0); v != DropNotAllowed {
			t.Fatalf("Filter = %v", v)
		}
		if v := p.FilterStream(src, msg, t0); v != DropNotAllowed {
			t.Fatalf("FilterStream = %v", v)
		}
	}
	st := p.Stats()
	if st[StatSources] != 0 || st["drop_not_allowed"] != 2000 || st["drop_scanner"] != 0 {
		t.Fatalf("stats %v", st)
	}
	if raceEnabled {
		return
	}
	src := ap("10.0.0.1:5060")
	// Mutation: charging the bucket before the allowlist check fails the
	// sources count above; building anything per message for it fails
	// here.
	if n := testing.AllocsPerRun(100, func() { p.Filter(src, msg, t0) }); n != 0 {
		t.Fatalf("not-allowed path allocates %v times", n)
	}
}

func TestAllowedPathDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	p := newPolicy(t, Config{Rate: 1e9, Burst: 1e9})
	msg := invite("User-Agent: baresip v1.0.0 (x86_64/linux)\r\n", "v=0\r\n")
	src := ap("[2001:db8::7]:5060")
	p.Filter(src, msg, t0)
	now := t0
	// Mutation: a per-message key or lower-cased copy of the header
	// allocates here.
	if n := testing.AllocsPerRun(100, func() {
		now = now.Add(time.Millisecond)
		if v := p.Filter(src, msg, now); v != Pass {
			t.Fatal(v)
		}
	}); n != 0 {
		t.Fatalf("allowed path allocates %v times", n)
	}
}

// The flood test: 127.0.0.2 floods, is blocked and counted, and
// 127.0.0.3 sending at its normal pace is never dropped; the block ends
// BlockFor after the flood stops.
func TestFloodFromOneSourceSparesOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPolicy(t, Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, WithClock(time.Now))
		flood, legit := ap("127.0.0.2:5060"), ap("127.0.0.3:5060")
		msg := invite("", "")
		counts := map[Verdict]int{}
		for i := range 10_000 { // 10 000 messages a second for 10 s
			if i%100 == 0 { // 10 messages a second
				// Mutation: one bucket for all sources drops these.
				if v := p.Filter(legit, msg, time.Now()); v != Pass {
					t.Fatalf("legitimate source dropped at %d: %v", i, v)
				}
			}
			counts[p.Filter(flood, msg, time.Now())]++
			time.Sleep(time.Millisecond)
		}
		if counts[Pass] != DefaultRate*2 || counts[DropRateLimited] != 1 || counts[DropBlocked] != 10_000-DefaultRate*2-1 {
			t.Fatalf("flood verdicts %v", counts)
		}
		st := p.Stats()
		if st[StatBlocks] != 1 || st[StatBlockedNow] != 1 || st["drop_blocked"] != uint64(counts[DropBlocked]) {
			t.Fatalf("stats %v", st)
		}
		// The flood stops: still blocked until BlockFor after its last
		// overflow, then released.
		time.Sleep(DefaultBlockFor - time.Second)
		if v := p.Filter(flood, msg, time.Now()); v != DropBlocked {
			t.Fatalf("before the end of the block: %v", v)
		}
		time.Sleep(time.Second)
		// Mutation: a block that never ends (or one that ends only on a
		// later overflow) fails here.
		if v := p.Filter(flood, msg, time.Now()); v != Pass {
			t.Fatalf("after the block: %v", v)
		}
		if st := p.Stats(); st[StatBlockedNow] != 0 {
			t.Fatalf("blocked now %d", st[StatBlockedNow])
		}
	})
}

// A source that stays within its rate while blocked is released BlockFor
// after its overflow; one that keeps flooding stays blocked.
func TestBlockRenewedWhileFlooding(t *testing.T) {
	tests := []struct {
		name     string
		interval time.Duration // between messages during the block
		released bool
	}{
		{"calm", 100 * time.Millisecond, true},
		{"flooding", 10 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPolicy(t, Config{Rate: 20, Burst: 5, BlockFor: 10 * time.Second})
			src, msg, now := ap("192.0.2.1:5060"), invite("", ""), t0
			for range 6 {
				p.Filter(src, msg, now)
			}
			if v := p.Filter(src, msg, now); v != DropBlocked {
				t.Fatalf("after the overflow: %v", v)
			}
			end := t0.Add(10 * time.Second)
			for now.Before(end) {
				now = now.Add(tc.interval)
				p.Filter(src, msg, now)
			}
			// A second later the bucket holds tokens again; only the
			// block can refuse the message.
			now = now.Add(time.Second)
			got := p.Filter(src, msg, now) == Pass
			// Mutation: renewing the block on every message while
			// blocked keeps the calm source out; never renewing lets
			// the flooder in.
			if got != tc.released {
				t.Fatalf("released = %v, want %v", got, tc.released)
			}
		})
	}
}

// 20 000 sources leave the table at its bound of 10 000, and the oldest
// are the ones forgotten.
func TestSourceTableBound(t *testing.T) {
	p := newPolicy(t, Config{})
	msg := invite("", "")
	src := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 5060)
	}
	for i := range 2 * DefaultMaxSources {
		p.Filter(src(i), msg, t0)
		if i == 100 {
			// Keep source 0 recent: it must survive the churn.
			p.Filter(src(0), msg, t0)
		}
		if i%1000 == 0 {
			p.Filter(src(0), msg, t0)
		}
	}
	if n := p.Stats()[StatSources]; n != DefaultMaxSources {
		t.Fatalf("sources = %d, want %d", n, DefaultMaxSources)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.sources.byKey[src(0).Addr()]; !ok {
		t.Fatal("a recently seen source was evicted")
	}
	if _, ok := p.sources.byKey[src(1).Addr()]; ok {
		t.Fatal("the oldest source was kept")
	}
	n := 0
	for s := p.sources.head; s != nil; s = s.next {
		n++
	}
	if n != DefaultMaxSources {
		t.Fatalf("recency list holds %d", n)
	}
}

// IPv6 sources of one /64 share a bucket: walking the interface ids does
// not escape the block, and another /64 is not affected.
func TestIPv6KeyedBySlash64(t *testing.T) {
	p := newPolicy(t, Config{Rate: 1, Burst: 2})
	msg := invite("", "")
	for i := range 3 {
		p.Filter(ap(fmt.Sprintf("[2001:db8:1:2::%x]:5060", i+1)), msg, t0)
	}
	if v := p.Filter(ap("[2001:db8:1:2:ffff::9]:5060"), msg, t0); v != DropBlocked {
		t.Fatalf("same /64: %v", v)
	}
	if v := p.Filter(ap("[2001:db8:1:3::1]:5060"), msg, t0); v != Pass {
		t.Fatalf("other /64: %v", v)
	}
	if n := p.Stats()[StatSources]; n != 2 {
		t.Fatalf("sources = %d, want 2", n)
	}
}

func TestOversize(t *testing.T) {
	p := newPolicy(t, Config{MaxMessageBytes: 2048})
	src := ap("192.0.2.1:5060")
	big := invite("", string(make([]byte, 2048)))
	if v := p.Filter(src, big, t0); v != DropOversize {
		t.Fatalf("Filter(big) = %v", v)
	}
	if v := p.Filter(src, invite("", ""), t0); v != Pass {
		t.Fatalf("Filter(small) = %v", v)
	}
	// A stream chunk's size says nothing of a message's.
	if v := p.FilterStream(src, big, t0); v != Pass {
		t.Fatalf("FilterStream(big) = %v", v)
	}
}

// On a stream, each message in a chunk takes a token.
func TestStreamChargesEachMessage(t *testing.T) {
	p := newPolicy(t, Config{Rate: 1, Burst: 10})
	src := ap("192.0.2.1:5060")
	msg := invite("", "v=0\r\nUser-Agent: friendly-scanner\r\n")
	chunk := append(append(append([]byte{}, msg...), "\r\n\r\n"...), msg...)
	for range 5 { // 10 messages: the bucket holds exactly those
		if v := p.FilterStream(src, chunk, t0); v != Pass {
			t.Fatalf("FilterStream = %v", v)
		}
	}
	// Mutation: charging one token per chunk passes this.
	if v := p.FilterStream(src, msg, t0); v != DropRateLimited {
		t.Fatalf("the 11th message: %v", v)
	}
}

// Filter from many goroutines at once: the counters add up and no
// goroutine is left.
func TestFilterConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		p := newPolicy(t, Config{Rate: 1e6, Burst: 1e6})
		msg := invite("", "")
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 1000 {
					src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(g*16 + i%16)}), 5060)
					p.Filter(src, msg, t0.Add(time.Duration(i)*time.Millisecond))
					if rel, err := p.Acquire(src); err == nil {
						rel()
					}
				}
			})
		}
		wg.Wait()
		synctest.Wait() // the goroutines wg.Go started have returned
		st := p.Stats()
		if st["passed"] != 8000 || st[StatSources] != 128 || st[StatDialogsOpen] != 0 {
			t.Fatalf("stats %v", st)
		}
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left", n)
		}
	})
}
