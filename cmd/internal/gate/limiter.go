package gate

import (
	"math"
	"net/netip"
	"sync"
	"time"
)

// none marks the end of the recency list.
const none = -1

// limiter holds a token bucket per source in a table of fixed size: the
// slots are allocated once, a source past the bound takes the slot of
// the least recent one, so no flood of sources grows it.
type limiter struct {
	rate  float64 // tokens per nanosecond
	burst float64
	epoch time.Time // bucket times are nanoseconds since it (monotonic)

	mu    sync.Mutex
	index map[netip.Addr]int32
	slots []bucket
	// used is how many slots hold a source; head is the most recent,
	// tail the least.
	used       int32
	head, tail int32
	evicted    uint64
}

// bucket is one source's tokens, in the recency list.
type bucket struct {
	key        netip.Addr
	tokens     float64
	last       int64 // ns since epoch of the last refill
	prev, next int32
}

func newLimiter(ratePerSec float64, burst, maxSources int) *limiter {
	return &limiter{
		rate:  ratePerSec / float64(time.Second),
		burst: float64(burst),
		epoch: time.Now(),
		index: make(map[netip.Addr]int32, maxSources),
		slots: make([]bucket, maxSources),
		head:  none, tail: none,
	}
}

// sourceKey is the bucket key of a peer address: IPv4 (mapped or not) as
// itself, IPv6 as its /64, without zone.
func sourceKey(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.Addr()
		}
	}
	return a
}

// allow takes a token of key's bucket, or says how long until one is
// there.
func (l *limiter) allow(key netip.Addr) (bool, time.Duration) {
	return l.allowAt(key, int64(time.Since(l.epoch)))
}

// allowAt is allow at now, in nanoseconds since l.epoch.
func (l *limiter) allowAt(key netip.Addr, now int64) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.index[key]
	if ok {
		l.unlinkLocked(i)
	} else {
		i = l.takeLocked()
		l.slots[i] = bucket{key: key, tokens: l.burst, last: now}
		l.index[key] = i
	}
	l.pushFrontLocked(i)
	b := &l.slots[i]
	if elapsed := now - b.last; elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+float64(elapsed)*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration(math.Ceil((1 - b.tokens) / l.rate))
}

// takeLocked is a free slot, or the least recent one, its source
// forgotten.
func (l *limiter) takeLocked() int32 {
	if int(l.used) < len(l.slots) {
		l.used++
		return l.used - 1
	}
	i := l.tail
	l.unlinkLocked(i)
	delete(l.index, l.slots[i].key)
	l.evicted++
	return i
}

func (l *limiter) unlinkLocked(i int32) {
	b := &l.slots[i]
	if b.prev != none {
		l.slots[b.prev].next = b.next
	} else {
		l.head = b.next
	}
	if b.next != none {
		l.slots[b.next].prev = b.prev
	} else {
		l.tail = b.prev
	}
	b.prev, b.next = none, none
}

func (l *limiter) pushFrontLocked(i int32) {
	b := &l.slots[i]
	b.prev, b.next = none, l.head
	if l.head != none {
		l.slots[l.head].prev = i
	}
	l.head = i
	if l.tail == none {
		l.tail = i
	}
}

// sources is how many sources the table holds and how many it forgot.
func (l *limiter) sources() (held int, evicted uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.index), l.evicted
}
