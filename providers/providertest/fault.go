package providertest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// FaultKind says how an injected fault breaks a provider session.
type FaultKind int

// The fault kinds. The zero FaultKind is no fault: a Fault{} injected into a
// mock is consumed by a session and does nothing.
const (
	// FaultDisconnect drops the session before event BeforeEvent: the
	// session reports *providers.Disconnected and ends.
	FaultDisconnect FaultKind = iota + 1
	// FaultStall stops delivery at event BeforeEvent for Duration (0: until
	// the session ends); what fell due meanwhile arrives at once afterwards,
	// as after a network freeze.
	FaultStall
	// FaultReject refuses the connect (the LLM's Stream) with
	// *providers.Rejected{Status}.
	FaultReject
	// FaultProtocol fails the session before event BeforeEvent with
	// *providers.Protocol.
	FaultProtocol
	// FaultDelay delivers event BeforeEvent Duration late and shifts every
	// later event by as much, as a slower service would.
	FaultDelay
	// FaultConnectStall makes the connect take Duration longer (0: until its
	// context is done, when it returns the context's error).
	FaultConnectStall
)

// String names the kind for test failures.
func (k FaultKind) String() string {
	switch k {
	case FaultDisconnect:
		return "disconnect"
	case FaultStall:
		return "stall"
	case FaultReject:
		return "reject"
	case FaultProtocol:
		return "protocol"
	case FaultDelay:
		return "delay"
	case FaultConnectStall:
		return "connect-stall"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault is one injected failure. A mock queues the faults it is given and
// hands one to each session that connects next, in order, so a test can
// script "the first session drops after 3 events, the retry is rejected".
type Fault struct {
	Kind FaultKind
	// BeforeEvent is the 0-based index, among the events the session has
	// delivered, of the event before which Disconnect, Stall, Protocol and
	// Delay act. The fault acts at the time that event falls due.
	BeforeEvent int
	// Status is the status of the Rejected error of FaultReject.
	Status int
	// Duration is how long Stall, Delay and ConnectStall last; 0 means until
	// the session's context or Close ends it (Delay: no delay).
	Duration time.Duration
}

// faultQueue holds the faults injected into a mock, guarded by its lock.
type faultQueue struct {
	faults []Fault
}

// push queues f for a later session.
func (q *faultQueue) push(f Fault) { q.faults = append(q.faults, f) }

// pop takes the fault of the session that connects now; the zero Fault
// when none is queued.
func (q *faultQueue) pop() Fault {
	if len(q.faults) == 0 {
		return Fault{}
	}
	f := q.faults[0]
	q.faults = q.faults[1:]
	return f
}

// connectWait plays a connect: the latency, a FaultConnectStall and a
// FaultReject. It returns ctx's error when ctx ends first.
func connectWait(ctx context.Context, latency time.Duration, f Fault) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d := latency
	if f.Kind == FaultConnectStall {
		if f.Duration == 0 {
			<-ctx.Done()
			return ctx.Err()
		}
		d += f.Duration
	}
	if err := sleepCtx(ctx, nil, d); err != nil {
		return err
	}
	if f.Kind == FaultReject {
		return &providers.Rejected{Status: f.Status, Detail: "injected fault"}
	}
	return nil
}

// sleepCtx waits d, or until ctx is done (its error) or stop is closed
// (providers.ErrClosed).
func sleepCtx(ctx context.Context, stop <-chan struct{}, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return providers.ErrClosed
	}
}

// sessionFault applies one session's Disconnect, Stall, Protocol or Delay
// fault to the times of its events, by their delivery index.
type sessionFault struct {
	f Fault
	// seen is set once the event at f.BeforeEvent was scheduled; the stall
	// and the shift are fixed from then on.
	seen         bool
	shift        time.Duration
	stallUntil   time.Time
	stallForever bool
}

// schedule says when event n, due at due without faults, is delivered.
// forever means not before the session ends; a non-nil fail means the
// session fails with it at that time instead of delivering event n.
func (sf *sessionFault) schedule(n int, due time.Time) (at time.Time, forever bool, fail error) {
	if n == sf.f.BeforeEvent && !sf.seen {
		sf.seen = true
		switch sf.f.Kind {
		case FaultDelay:
			sf.shift = sf.f.Duration
		case FaultStall:
			if sf.f.Duration == 0 {
				sf.stallForever = true
			} else {
				sf.stallUntil = due.Add(sf.f.Duration)
			}
		}
	}
	at = due.Add(sf.shift)
	if at.Before(sf.stallUntil) {
		at = sf.stallUntil
	}
	if n == sf.f.BeforeEvent {
		switch sf.f.Kind {
		case FaultDisconnect:
			fail = &providers.Disconnected{}
		case FaultProtocol:
			fail = &providers.Protocol{Detail: "injected fault"}
		}
	}
	return at, sf.stallForever, fail
}

// feed is what a session owes, read by its pump under the session's lock.
type feed[E any] interface {
	// nextLocked tells when the next owed event is due, before faults; ok
	// is false when nothing is owed yet.
	nextLocked() (due time.Time, ok bool)
	// popLocked removes the event nextLocked announced (due is its due
	// time) and returns it.
	popLocked(due time.Time) E
}

// pump is the one goroutine of a channel-based mock session: it delivers
// the session's owed events on time, applies the session's fault, and ends
// on Close, on the session's context or after a failure, closing the events
// channel. Producers never send on the channel themselves, so the order of
// events is the order of the feed and nothing is sent after the end.
type pump[E any] struct {
	mu     *sync.Mutex // the session's lock, which guards feed and the fields below
	feed   feed[E]
	failEv func(error) E
	ctx    context.Context
	out    chan E
	wake   chan struct{}
	done   chan struct{}
	exited chan struct{}
	once   sync.Once

	fault  sessionFault
	sent   int
	ended  bool
	endErr error
}

// eventBuffer is the capacity of the events channels of the mocks, large
// enough that a reader that keeps up never slows the timing.
const eventBuffer = 64

// newPump makes a pump for a session bounded by ctx; start runs it.
func newPump[E any](ctx context.Context, mu *sync.Mutex, fd feed[E], f Fault, failEv func(error) E) *pump[E] {
	return &pump[E]{
		mu:     mu,
		feed:   fd,
		failEv: failEv,
		ctx:    ctx,
		out:    make(chan E, eventBuffer),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
		fault:  sessionFault{f: f},
	}
}

// start runs the pump's goroutine; close stops it.
func (p *pump[E]) start() { go p.run() }

// pokeLocked tells the pump that the feed changed. It never blocks.
func (p *pump[E]) pokeLocked() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// errLocked is why the session ended (providers.ErrClosed after Close, the
// context's error, the injected failure), nil while it runs.
func (p *pump[E]) errLocked() error {
	if !p.ended {
		return nil
	}
	return p.endErr
}

// endLocked records why the session ended; the first reason wins.
func (p *pump[E]) endLocked(err error) {
	if !p.ended {
		p.ended, p.endErr = true, err
	}
}

// close ends the session and waits for the pump to exit, dropping what is
// still owed. Safe to call more than once.
func (p *pump[E]) close() {
	p.mu.Lock()
	p.endLocked(providers.ErrClosed)
	p.mu.Unlock()
	p.once.Do(func() { close(p.done) })
	<-p.exited
}

// run delivers events until the session ends.
func (p *pump[E]) run() {
	defer close(p.exited)
	defer close(p.out)
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		err := p.ctx.Err()
		if err == nil {
			err = providers.ErrClosed
		}
		p.endLocked(err)
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		p.mu.Lock()
		if p.ended || p.ctx.Err() != nil {
			p.mu.Unlock()
			return
		}
		var wait <-chan time.Time
		if due, ok := p.feed.nextLocked(); ok {
			at, forever, fail := p.fault.schedule(p.sent, due)
			now := time.Now()
			switch {
			case forever:
			case at.After(now):
				timer.Reset(at.Sub(now))
				wait = timer.C
			case fail != nil:
				p.endLocked(fail)
				p.mu.Unlock()
				p.send(p.failEv(fail))
				return
			default:
				ev := p.feed.popLocked(due)
				p.sent++
				p.mu.Unlock()
				if !p.send(ev) {
					return
				}
				continue
			}
		}
		p.mu.Unlock()
		select {
		case <-wait:
		case <-p.wake:
			timer.Stop()
		case <-p.done:
			return
		case <-p.ctx.Done():
			return
		}
	}
}

// send hands ev to the reader; it gives up when the session ends, so a
// reader that stopped reading cannot keep the pump alive.
func (p *pump[E]) send(ev E) bool {
	select {
	case <-p.done:
		return false
	case <-p.ctx.Done():
		return false
	default:
	}
	select {
	case p.out <- ev:
		return true
	case <-p.done:
		return false
	case <-p.ctx.Done():
		return false
	}
}
