package trunk

import (
	"net/netip"
	"time"
)

// source is one allowed source's bucket, in the table's recency list.
type source struct {
	key          netip.Addr
	tokens       float64
	last         time.Time // of the last refill
	blockedUntil time.Time
	prev, next   *source // toward the most and the least recently seen
}

// refill adds the tokens earned since the last refill.
func (s *source) refill(now time.Time, rate, burst float64) {
	if d := now.Sub(s.last); d > 0 {
		s.tokens = min(burst, s.tokens+d.Seconds()*rate)
		s.last = now
	}
}

// sourceTable is the bounded per-source state: a map and a recency list;
// when it is full the least recently seen source is forgotten and its
// entry reused.
type sourceTable struct {
	max        int
	byKey      map[netip.Addr]*source
	head, tail *source // most, least recently seen
}

func newSourceTable(max int) sourceTable {
	return sourceTable{max: max, byKey: make(map[netip.Addr]*source)}
}

func (t *sourceTable) len() int { return len(t.byKey) }

// get returns the entry of key, made (with a full bucket) if there is
// none, and marks it the most recently seen.
func (t *sourceTable) get(key netip.Addr, now time.Time, burst float64) *source {
	if s, ok := t.byKey[key]; ok {
		t.unlink(s)
		t.pushFront(s)
		return s
	}
	var s *source
	if len(t.byKey) >= t.max {
		s = t.tail
		t.unlink(s)
		delete(t.byKey, s.key)
		*s = source{}
	} else {
		s = new(source)
	}
	s.key, s.tokens, s.last = key, burst, now
	t.byKey[key] = s
	t.pushFront(s)
	return s
}

// blockedAt counts the sources blocked at now.
func (t *sourceTable) blockedAt(now time.Time) int {
	n := 0
	for s := t.head; s != nil; s = s.next {
		if now.Before(s.blockedUntil) {
			n++
		}
	}
	return n
}

func (t *sourceTable) unlink(s *source) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		t.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		t.tail = s.prev
	}
	s.prev, s.next = nil, nil
}

func (t *sourceTable) pushFront(s *source) {
	s.next = t.head
	if t.head != nil {
		t.head.prev = s
	}
	t.head = s
	if t.tail == nil {
		t.tail = s
	}
}
