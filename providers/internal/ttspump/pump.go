package ttspump

import (
	"context"
	"errors"
	"sync"

	"github.com/brisvox/brisvox/providers"
)

// Pump is one session's pending events and delivery goroutine. Its
// methods named ...Locked want the session's lock (the one given to New)
// held; the others take no lock.
type Pump struct {
	mu       sync.Locker // the session's lock: guards pending, head, ended, endErr
	events   chan providers.TTSEvent
	stop     chan struct{} // Stop, or the session ended without failure
	stopOnce sync.Once
	done     chan struct{}
	wake     chan struct{} // pending grew, or the session ended
	space    chan struct{} // pending shrank, or the session ended

	pending []providers.TTSEvent // from head on
	head    int
	ended   bool
	endErr  error
}

// New makes a pump whose queue mu guards and whose Events channel holds
// buffer events. Start runs its goroutine.
func New(mu sync.Locker, buffer int) *Pump {
	return &Pump{
		mu:     mu,
		events: make(chan providers.TTSEvent, buffer),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
		space:  make(chan struct{}, 1),
	}
}

// Start runs the delivery goroutine; Stop and Wait end it.
func (p *Pump) Start() { go p.run() }

// Events delivers the queued events in order; it is closed when the
// session has ended, after one event with Err set if it failed.
func (p *Pump) Events() <-chan providers.TTSEvent { return p.events }

// Stop makes the goroutine return without delivering more. It may be
// called more than once.
func (p *Pump) Stop() { p.stopOnce.Do(func() { close(p.stop) }) }

// Wait waits for the goroutine Start ran to return.
func (p *Pump) Wait() { <-p.done }

// Space is signalled when the queue shrank or the session ended: a reader
// waiting for room waits on it.
func (p *Pump) Space() <-chan struct{} { return p.space }

// PendingLocked counts the queued events.
func (p *Pump) PendingLocked() int { return len(p.pending) - p.head }

// QueueLocked appends ev for the goroutine.
func (p *Pump) QueueLocked(ev providers.TTSEvent) {
	p.pending = append(p.pending, ev)
	signal(p.wake)
}

// RetractLocked takes back the queued events of the context, all but its
// Cancelled acks, keeping the others in order; it returns how many it
// took.
func (p *Pump) RetractLocked(contextID string) int {
	kept := p.pending[:p.head]
	for _, ev := range p.pending[p.head:] {
		if ev.ContextID == contextID && ev.Kind != providers.TTSCancelled {
			continue
		}
		kept = append(kept, ev)
	}
	n := len(p.pending) - len(kept)
	clear(p.pending[len(kept):])
	p.pending = kept
	signal(p.space)
	return n
}

// EndLocked records the session's end: the goroutine delivers what is
// queued, then err as an Err event, and closes Events. A session ended
// without failure (err nil, context.Canceled or DeadlineExceeded: Close
// or the session's context) drops what is queued and reports nothing.
func (p *Pump) EndLocked(err error) {
	p.ended, p.endErr = true, err
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		p.endErr = nil
		p.pending, p.head = nil, 0
		p.Stop()
	}
	signal(p.wake)
	signal(p.space)
}

// CapLocked is the size of the queue's array: the memory it holds.
func (p *Pump) CapLocked() int { return cap(p.pending) }

// EndedLocked tells whether EndLocked was called.
func (p *Pump) EndedLocked() bool { return p.ended }

// PopLocked takes the first queued event. The goroutine Start runs is
// its caller; a test may drive the queue with it instead.
func (p *Pump) PopLocked() (providers.TTSEvent, bool) {
	if p.head == len(p.pending) {
		return providers.TTSEvent{}, false
	}
	ev := p.pending[p.head]
	p.pending[p.head] = providers.TTSEvent{}
	p.head++
	switch {
	case p.head == len(p.pending):
		p.pending, p.head = p.pending[:0], 0
	case p.head >= 64 && 2*p.head >= len(p.pending):
		// A queue never empty would grow its array for good.
		n := copy(p.pending, p.pending[p.head:])
		clear(p.pending[n:])
		p.pending, p.head = p.pending[:n], 0
	}
	return ev, true
}

// run is the delivery goroutine: it hands the queued events to Events in
// order, then the failure (if any), then closes Events. It returns at
// once on Stop.
func (p *Pump) run() {
	defer close(p.done)
	defer close(p.events)
	for {
		p.mu.Lock()
		if ev, ok := p.PopLocked(); ok {
			p.mu.Unlock()
			signal(p.space)
			select {
			case p.events <- ev:
			case <-p.stop:
				return
			}
			continue
		}
		if p.ended {
			err := p.endErr
			p.mu.Unlock()
			if err != nil {
				select {
				case p.events <- providers.TTSEvent{Kind: providers.TTSError, Err: err}:
				case <-p.stop:
				}
			}
			return
		}
		p.mu.Unlock()
		select {
		case <-p.wake:
		case <-p.stop:
			return
		}
	}
}

// signal wakes whoever waits on the one-slot channel c.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
