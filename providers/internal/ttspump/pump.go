package ttspump

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/brisvox/brisvox/providers"
)

// Pump is one session's pending events and delivery goroutine. Its
// methods named ...Locked want the session's lock (the one given to New)
// held; the others take no lock.
type Pump struct {
	mu       sync.Locker // the session's lock: guards the queue, the end and the offer fields
	events   chan providers.TTSEvent
	stop     chan struct{} // Stop, or the session ended without failure
	stopOnce sync.Once
	done     chan struct{}
	wake     chan struct{} // pending grew, or the session ended
	space    chan struct{} // pending shrank, or the session ended
	recheck  chan struct{} // the event held out is dropped or overtaken

	pending []providers.TTSEvent // from head on
	head    int
	ended   bool
	endErr  error
	endCtx  string // the ContextID of the Err event

	// The context and kind of the event the goroutine holds out to the
	// reader, and what a call made meanwhile wants done with it.
	offerCtx   string
	offerKind  providers.TTSEventKind
	offering   bool
	dropOffer  bool // taken back (RetractLocked) or failed over (FailLocked)
	yieldOffer bool // an event was queued ahead (QueueAheadLocked)
}

// New makes a pump whose queue mu guards and whose Events channel holds
// buffer events. Start runs its goroutine.
func New(mu sync.Locker, buffer int) *Pump {
	return &Pump{
		mu:      mu,
		events:  make(chan providers.TTSEvent, buffer),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		wake:    make(chan struct{}, 1),
		space:   make(chan struct{}, 1),
		recheck: make(chan struct{}, 1),
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

// QueueAheadLocked queues ev ahead of every queued event but the
// Cancelled acks already there (so acks stay in the order they were
// queued), and ahead of the event held out to the reader unless that is
// an ack too: a Cancel's ack overtakes the audio waiting for the caller.
func (p *Pump) QueueAheadLocked(ev providers.TTSEvent) {
	if p.offering && p.offerKind != providers.TTSCancelled && !p.dropOffer {
		p.yieldOffer = true
		signal(p.recheck)
	}
	p.insertAheadLocked(ev)
	signal(p.wake)
}

// insertAheadLocked puts ev after the queue's leading Cancelled acks.
func (p *Pump) insertAheadLocked(ev providers.TTSEvent) {
	i := p.head
	for i < len(p.pending) && p.pending[i].Kind == providers.TTSCancelled {
		i++
	}
	if i == p.head && p.head > 0 {
		p.head--
		p.pending[p.head] = ev
		return
	}
	p.pending = slices.Insert(p.pending, i, ev)
}

// AcksLocked counts the Cancelled acks not yet delivered (queued or held
// out to the reader) and tells whether one of them is the context's.
func (p *Pump) AcksLocked(contextID string) (n int, has bool) {
	count := func(ev providers.TTSEvent) {
		if ev.Kind == providers.TTSCancelled {
			n++
			has = has || ev.ContextID == contextID
		}
	}
	if p.offering && !p.dropOffer && p.offerKind == providers.TTSCancelled {
		n++
		has = has || p.offerCtx == contextID
	}
	for _, ev := range p.pending[p.head:] {
		count(ev)
	}
	return n, has
}

// RetractLocked takes back the queued events of the context, all but its
// Cancelled acks, keeping the others in order, and the event held out to
// the reader if it is one of them; it returns how many it took. (The
// event held out may be taken by the reader while RetractLocked runs: it
// is then counted all the same.)
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
	if p.offering && !p.dropOffer && p.offerCtx == contextID && p.offerKind != providers.TTSCancelled {
		p.dropOffer = true
		n++
		signal(p.recheck)
	}
	signal(p.space)
	return n
}

// EndLocked records the session's end: the goroutine delivers what is
// queued, then err as an Err event, and closes Events. A session ended
// without failure (err nil, context.Canceled or DeadlineExceeded: Close
// or the session's context) drops what is queued and reports nothing.
func (p *Pump) EndLocked(err error) {
	if p.ended {
		return
	}
	p.ended, p.endErr = true, err
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		p.endErr = nil
		p.pending, p.head = nil, 0
		p.Stop()
	}
	signal(p.wake)
	signal(p.space)
}

// FailLocked ends the session with err at once: what is queued and the
// event held out to the reader are dropped, the goroutine delivers err as
// an Err event of contextID ("" for the session), then closes Events. It
// is for sessions whose own work failed (a request, a synthesis); after
// EndLocked it does nothing.
func (p *Pump) FailLocked(err error, contextID string) {
	if p.ended {
		return
	}
	p.ended, p.endErr, p.endCtx = true, err, contextID
	clear(p.pending)
	p.pending, p.head = p.pending[:0], 0
	if p.offering {
		p.dropOffer = true
		signal(p.recheck)
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
		p.offering, p.dropOffer, p.yieldOffer = false, false, false
		if ev, ok := p.PopLocked(); ok {
			p.offerCtx, p.offerKind, p.offering = ev.ContextID, ev.Kind, true
			p.mu.Unlock()
			signal(p.space)
			if !p.hand(ev) {
				return
			}
			continue
		}
		if p.ended {
			err, ctx := p.endErr, p.endCtx
			p.mu.Unlock()
			if err != nil {
				select {
				case <-p.stop:
				default:
					select {
					case p.events <- providers.TTSEvent{Kind: providers.TTSError, ContextID: ctx, Err: err}:
					case <-p.stop:
					}
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

// hand holds ev out to the reader until it is taken, taken back, or
// overtaken by an event queued ahead (then put back behind it); it is
// false on Stop.
func (p *Pump) hand(ev providers.TTSEvent) bool {
	for {
		select {
		case <-p.stop:
			return false
		default:
		}
		select {
		case p.events <- ev:
			return true
		case <-p.recheck:
			p.mu.Lock()
			switch {
			case p.dropOffer:
				p.mu.Unlock()
				return true
			case p.yieldOffer:
				p.insertAheadLocked(ev)
				p.mu.Unlock()
				return true
			}
			p.mu.Unlock()
		case <-p.stop:
			return false
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
