package gate

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRateLimit: a source gets Burst requests at once, then RatePerSec,
// and its bucket never holds more than Burst; sources are apart.
// Mutations caught (each seen failing): no cap at the burst in allowAt
// (after 10 s idle 50 passed at once); Retry-After rounded down (0 for
// 200 ms).
func TestRateLimit(t *testing.T) {
	inBubble(t, Config{}, func(r *rig) {
		pass := func(remote string, n int) int {
			ok := 0
			for i := range n {
				w := r.do("GET", "/pcm", remote+":"+strconv.Itoa(40000+i), "")
				switch w.Code {
				case 200:
					ok++
				case 429:
					if ra := w.Header().Get("Retry-After"); ra != "1" {
						t.Errorf("Retry-After %q, want 1 (200 ms rounded up)", ra)
					}
					if _, cause := body(t, w); cause != CauseRateLimited {
						t.Errorf("cause %q", cause)
					}
				default:
					t.Fatalf("status %d", w.Code)
				}
			}
			return ok
		}
		if n := pass("192.0.2.1", 30); n != DefaultBurst {
			t.Fatalf("%d of 30 at once passed, want the burst %d", n, DefaultBurst)
		}
		if n := pass("192.0.2.2", 30); n != DefaultBurst {
			t.Fatalf("another source: %d passed, want %d", n, DefaultBurst)
		}
		time.Sleep(200 * time.Millisecond)
		if n := pass("192.0.2.1", 3); n != 1 {
			t.Fatalf("200 ms later %d passed, want 1", n)
		}
		time.Sleep(time.Second)
		if n := pass("192.0.2.1", 10); n != 5 {
			t.Fatalf("1 s later %d passed, want 5", n)
		}
		time.Sleep(10 * time.Second)
		if n := pass("192.0.2.1", 50); n != DefaultBurst {
			t.Fatalf("after 10 s idle %d passed, want the burst %d", n, DefaultBurst)
		}
		st := r.g.Stats()
		if st[CauseRateLimited] != 10+10+2+5+30 || st[CauseUnauthorized] != 0 {
			t.Errorf("stats %v", st)
		}
	})
}

// TestRateLimitBeforeCredentials: guesses of a token are limited like
// any request, and a request refused for its rate is not counted as a
// bad credential.
func TestRateLimitBeforeCredentials(t *testing.T) {
	inBubble(t, Config{Token: testToken}, func(r *rig) {
		codes := map[int]int{}
		for i := range 100 {
			codes[r.do("GET", "/pcm", "198.51.100.7:1", "Bearer guess-"+strconv.Itoa(i)+testToken).Code]++
		}
		if codes[403] != DefaultBurst || codes[429] != 100-DefaultBurst {
			t.Fatalf("codes %v", codes)
		}
		if st := r.g.Stats(); st[CauseForbidden] != DefaultBurst || st[CauseRateLimited] != 100-DefaultBurst {
			t.Fatalf("stats %v", st)
		}
	})
}

// TestRetryAfter: whole seconds, rounded up, never 0.
func TestRetryAfter(t *testing.T) {
	cases := []struct {
		rate float64
		want string
	}{{5, "1"}, {1, "1"}, {0.5, "2"}, {0.1, "10"}, {1.0 / 3600, "3600"}}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.rate), func(t *testing.T) {
			inBubble(t, Config{RatePerSec: c.rate, Burst: 1}, func(r *rig) {
				r.do("GET", "/", "192.0.2.1:1", "")
				w := r.do("GET", "/", "192.0.2.1:1", "")
				if w.Code != 429 || w.Header().Get("Retry-After") != c.want {
					t.Fatalf("%d Retry-After %q, want 429 %s", w.Code, w.Header().Get("Retry-After"), c.want)
				}
			})
		})
	}
	for _, c := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Nanosecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {-time.Second, 1}} {
		if got := retryAfterSeconds(c.d); got != c.want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

// TestSourceKey: what counts as one source. X-Forwarded-For is not even
// read; an IPv6 host is its /64; a v4-mapped address is the v4 one.
func TestSourceKey(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"::ffff:192.0.2.1", "192.0.2.1", true},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"fe80::1%eth0", "fe80::1%eth1", true},
		{"::1", "127.0.0.1", false},
	}
	for _, c := range cases {
		a, b := netip.MustParseAddr(c.a), netip.MustParseAddr(c.b)
		if got := sourceKey(a) == sourceKey(b); got != c.same {
			t.Errorf("%s and %s: same source %v, want %v", c.a, c.b, got, c.same)
		}
	}
	inBubble(t, Config{Burst: 1}, func(r *rig) {
		forwarded := func(xff string) int { return newRecorderRequest(r, "203.0.113.5:999", xff) }
		if forwarded("10.0.0.1") != 200 || forwarded("10.0.0.2") != 429 {
			t.Fatal("X-Forwarded-For made another source")
		}
		// An address that is not ip:port is one shared source.
		if newRecorderRequest(r, "@unix", "") != 200 || newRecorderRequest(r, "garbage", "") != 429 {
			t.Fatal("unparsable peers are not one source")
		}
	})
}

// TestFlood: 100,000 sources, IPv4 and IPv6, keep the table at
// MaxSources and the heap flat; the sources kept are the most recent
// and the recency list stays whole.
// Mutations caught (each seen failing): takeLocked growing past the
// table (`l.used < len(l.slots)` dropped: index out of range); not
// deleting the evicted key from the index (the index grew to 101,024);
// pushFrontLocked not linking the old head back (the list breaks and
// the wrong sources are evicted).
func TestFlood(t *testing.T) {
	const sources, max = 100_000, 1024
	l := newLimiter(5, 20, max)
	var ms runtime.MemStats
	addr := func(i int, v6 bool) netip.Addr {
		if v6 {
			var b [16]byte
			b[0], b[1] = 0x20, 0x01
			binary.BigEndian.PutUint64(b[:8], 0x2001_0db8_0000_0000|uint64(i))
			return netip.AddrFrom16(b)
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], 0x0a00_0000|uint32(i))
		return netip.AddrFrom4(b)
	}
	for i := range 2 * max { // warm: the table and the map at full size
		l.allowAt(sourceKey(addr(i, false)), int64(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	for i := range sources {
		l.allowAt(sourceKey(addr(i, i%2 == 1)), int64(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	grown := int64(ms.HeapAlloc) - int64(before)
	held, evicted := l.sources()
	if held != max || evicted != uint64(2*max+sources-max) {
		t.Fatalf("held %d evicted %d, want %d and %d", held, evicted, max, 2*max+sources-max)
	}
	// The allocation was made at New: a table of 1024 is ~100 kB.
	if grown > 256<<10 {
		t.Errorf("the heap grew by %d bytes under the flood", grown)
	}
	for i := sources - max; i < sources; i++ {
		if _, ok := l.index[sourceKey(addr(i, i%2 == 1))]; !ok {
			t.Fatalf("source %d of the last %d was forgotten", i, max)
		}
	}
	checkList(t, l)
	t.Logf("100k sources: table %d, heap grown %d bytes", held, grown)
}

// checkList walks the recency list both ways: every held slot once, the
// index pointing at it.
func checkList(t *testing.T, l *limiter) {
	t.Helper()
	n, prev := 0, int32(none)
	for i := l.head; i != none; i = l.slots[i].next {
		if l.slots[i].prev != prev {
			t.Fatalf("slot %d: prev %d, want %d", i, l.slots[i].prev, prev)
		}
		if j, ok := l.index[l.slots[i].key]; !ok || j != i {
			t.Fatalf("slot %d not indexed", i)
		}
		if tok := l.slots[i].tokens; tok < 0 || tok > l.burst || math.IsNaN(tok) {
			t.Fatalf("slot %d holds %v tokens", i, tok)
		}
		prev = i
		if n++; n > len(l.slots) {
			t.Fatal("the list has a cycle")
		}
	}
	if prev != l.tail || n != int(l.used) || n != len(l.index) {
		t.Fatalf("list of %d ends at %d (tail %d), used %d, indexed %d", n, prev, l.tail, l.used, len(l.index))
	}
}

// TestConcurrentAllow: 8 goroutines on one source and on their own,
// time standing still: exactly Burst pass on the shared one, each own
// source passes Burst, every refusal is counted. Run with -race.
func TestConcurrentAllow(t *testing.T) {
	inBubble(t, Config{}, func(r *rig) {
		shared := netip.MustParseAddr("192.0.2.1")
		var mu sync.Mutex
		passed := map[string]int{}
		var wg sync.WaitGroup
		for g := range 8 {
			own := netip.AddrFrom4([4]byte{198, 51, 100, byte(g)})
			wg.Go(func() {
				for range 100 {
					okS, _ := r.g.Allow(shared)
					okO, _ := r.g.Allow(own)
					mu.Lock()
					if okS {
						passed["shared"]++
					}
					if okO {
						passed[own.String()]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if passed["shared"] != DefaultBurst {
			t.Errorf("shared source: %d passed, want %d", passed["shared"], DefaultBurst)
		}
		if len(passed) != 9 {
			t.Errorf("passed %v", passed)
		}
		for k, n := range passed {
			if n != DefaultBurst {
				t.Errorf("%s: %d passed", k, n)
			}
		}
		if got := r.g.Stats()[CauseRateLimited]; got != 1600-9*DefaultBurst {
			t.Errorf("rate_limited %d, want %d", got, 1600-9*DefaultBurst)
		}
		checkList(t, r.g.limit)
	})
}
