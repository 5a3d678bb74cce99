package carriertest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media/conn"
)

// Admitter is a counting reservation of at most Limit slots with the
// contract of the server's: Admit reserves a slot atomically or refuses
// with a *conn.Refusal (RefusedFull, RetryAfter); a slot is given
// back exactly once, by Release before the call started, or by End after
// it (what the server does when the call ends). Start marks the call
// started (Release then does nothing).
type Admitter struct {
	Limit      int
	RetryAfter time.Duration

	inUse    atomic.Int64
	admitted atomic.Int64
	refused  atomic.Int64
	twice    atomic.Int64 // slots given back more than once
}

// Slot is one reservation.
type Slot struct {
	a       *Admitter
	mu      sync.Mutex
	started bool
	freed   bool
}

var _ conn.Admission = (*Slot)(nil)

// Admit is the conn.Admitter.
func (a *Admitter) Admit() (conn.Admission, error) {
	for {
		n := a.inUse.Load()
		if n >= int64(a.Limit) {
			a.refused.Add(1)
			return nil, &conn.Refusal{Cause: conn.RefusedFull,
				Detail: fmt.Sprintf("%d calls", a.Limit), RetryAfter: a.RetryAfter}
		}
		if a.inUse.CompareAndSwap(n, n+1) {
			a.admitted.Add(1)
			return &Slot{a: a}, nil
		}
	}
}

// Release gives the slot back unless the call started.
func (s *Slot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.freeLocked()
}

// Start marks the call started: from now on End frees the slot.
func (s *Slot) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
}

// End frees the slot of a started call.
func (s *Slot) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.freeLocked()
}

func (s *Slot) freeLocked() {
	if s.freed {
		s.a.twice.Add(1)
		return
	}
	s.freed = true
	s.a.inUse.Add(-1)
}

// InUse is the number of slots reserved and not given back.
func (a *Admitter) InUse() int { return int(a.inUse.Load()) }

// Admitted and Refused count the reservations made and refused.
func (a *Admitter) Admitted() int { return int(a.admitted.Load()) }

// Refused counts the refusals.
func (a *Admitter) Refused() int { return int(a.refused.Load()) }

// Twice counts slots given back more than once (a bug of the caller).
func (a *Admitter) Twice() int { return int(a.twice.Load()) }
