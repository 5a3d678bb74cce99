package kit

import (
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
)

// Workers is a dispatcher on long-lived goroutines owned by a System: a
// mailbox that schedules itself is handed to an idle worker instead of a
// goroutine of its own (protoactor's default dispatcher starts one per
// schedule, and each grows its stack again through the actor's Receive).
//
// Workers start on demand, up to Max, and then stay: a worker that finished
// a mailbox's run waits on an unbuffered channel for the next, so handing a
// run over is one channel send to a waiting goroutine, whose stack has
// already grown to what the actors need. Nothing is ever queued behind a
// busy worker: when no worker waits and Max are running, the run gets a
// goroutine of its own, as with protoactor's dispatcher, and is counted
// (Overflow). So one slow Receive (a cgo call, a long write) delays only
// its own actor, never the calls behind it, and a Receive that waits for
// another actor cannot deadlock the pool. A parked worker is durably
// blocked for testing/synctest when the pool was made in the bubble.
//
// Close stops the workers and waits for them and for the overflow
// goroutines; a run scheduled after Close gets a goroutine of its own.
type Workers struct {
	max int
	// work hands a run to a parked worker: unbuffered, so a send succeeds
	// only when a worker waits for it, and a nil run stops the worker.
	work chan func()

	mu      sync.Mutex // guards started and closed
	started int
	closed  atomic.Bool

	wg       sync.WaitGroup
	overflow atomic.Uint64
}

var _ actor.Dispatcher = (*Workers)(nil)

// NewWorkers makes a pool of at most n workers (at least 1).
func NewWorkers(n int) *Workers {
	return &Workers{max: max(n, 1), work: make(chan func())}
}

// Schedule runs fn on an idle worker, on a new one when none is idle and
// fewer than Max run, and on a goroutine of its own otherwise. It never
// blocks and never waits for a busy worker.
func (p *Workers) Schedule(fn func()) {
	if !p.closed.Load() {
		select {
		case p.work <- fn:
			return
		default:
		}
	}
	p.mu.Lock()
	switch {
	case p.closed.Load():
		p.mu.Unlock()
		go fn()
	case p.started < p.max:
		p.started++
		p.wg.Add(1)
		p.mu.Unlock()
		go p.loop(fn)
	default:
		p.wg.Add(1)
		p.mu.Unlock()
		p.overflow.Add(1)
		go p.spare(fn)
	}
}

// Throughput is protoactor's messages per run for its own mailboxes;
// kit.Mailbox keeps its own (throughput).
func (p *Workers) Throughput() int { return throughput }

// Max is the most workers the pool starts.
func (p *Workers) Max() int { return p.max }

// Started is how many workers run (busy or idle).
func (p *Workers) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// Overflow counts the runs that found every worker busy and Max started,
// and got a goroutine of their own.
func (p *Workers) Overflow() uint64 { return p.overflow.Load() }

// Close stops the workers (a busy one after its run) and waits for them
// and for the overflow goroutines. It may be called more than once.
func (p *Workers) Close() {
	p.mu.Lock()
	n := p.started
	if p.closed.Load() {
		n = 0
	}
	p.closed.Store(true)
	p.mu.Unlock()
	for range n {
		p.work <- nil
	}
	p.wg.Wait()
}

// loop runs fn, then whatever it is handed, until it is handed nil.
func (p *Workers) loop(fn func()) {
	stopped := false
	defer func() {
		if !stopped {
			// A run called runtime.Goexit (a test's FailNow in an actor)
			// and took this goroutine along: another takes its place, so
			// the workers Close stops are all there.
			p.wg.Add(1)
			go p.loop(nil)
		}
		p.wg.Done()
	}()
	if fn != nil {
		fn()
	}
	for fn = range p.work { // never closed: a nil run stops a worker
		if fn == nil {
			stopped = true
			return
		}
		fn()
	}
}

func (p *Workers) spare(fn func()) {
	defer p.wg.Done()
	fn()
}

// SystemWorkers is a dispatcher to name in an actor's props
// (actor.WithDispatcher(kit.SystemWorkers)) together with a kit.Mailbox:
// the mailbox then runs on the Workers of the System it is spawned in, or,
// when that system has none (NewSystem without WithWorkers), on a goroutine
// per schedule like protoactor's default. Props made without knowing the
// system (the session's, the switchboard's) can so ask for its workers.
// Used with another mailbox, it is protoactor's default dispatcher.
var SystemWorkers actor.Dispatcher = systemWorkers{}

type systemWorkers struct{}

func (systemWorkers) Schedule(fn func()) { go fn() }
func (systemWorkers) Throughput() int    { return throughput }

// workersID is the extension slot where a System keeps its Workers.
var workersID = extensions.NextExtensionID()

// workersExt puts a pool in an actor system's extensions.
type workersExt struct{ w *Workers }

func (workersExt) ExtensionID() extensions.ExtensionID { return workersID }

// WorkersOf returns the Workers of the actor system, nil when it has none.
func WorkersOf(sys *actor.ActorSystem) *Workers {
	if sys == nil || sys.Extensions == nil {
		return nil
	}
	if e, ok := sys.Extensions.Get(workersID).(workersExt); ok {
		return e.w
	}
	return nil
}

// resolve turns SystemWorkers into the dispatcher it stands for in the
// system of invoker (an actor's context); any other dispatcher is kept.
func resolve(d actor.Dispatcher, invoker actor.MessageInvoker) actor.Dispatcher {
	if _, ok := d.(systemWorkers); !ok {
		return d
	}
	if c, ok := invoker.(interface{ ActorSystem() *actor.ActorSystem }); ok {
		if w := WorkersOf(c.ActorSystem()); w != nil {
			return w
		}
	}
	return d
}
