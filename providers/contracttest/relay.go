package contracttest

import "sync"

// relay is the one goroutine of a double that rewrites a session's
// events: it passes each event of in through step, which hands what the
// caller is to see to emit, until in closes, step says stop, or stop is
// closed; it closes out on its way out. emit reports false once stop is
// closed, so a caller that stopped reading cannot keep it alive.
type relay[E any] struct {
	out    chan E
	extra  chan E // events injected by the double, emitted as they come
	stop   chan struct{}
	exited chan struct{}
	once   sync.Once
}

// relayStep is what a relay does with one event ev of the inner session:
// it hands what the caller is to see to emit, and says whether to go on.
type relayStep[E any] func(ev E, emit func(E) bool) bool

// newRelay starts the relay of in through step.
func newRelay[E any](in <-chan E, step relayStep[E]) *relay[E] {
	r := &relay[E]{out: make(chan E, relayBuffer), extra: make(chan E, relayBuffer), stop: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(r.exited)
		defer close(r.out)
		for {
			select {
			case ev, ok := <-in:
				if !ok || !step(ev, r.emit) {
					return
				}
			case ev := <-r.extra:
				if !r.emit(ev) {
					return
				}
			case <-r.stop:
				return
			}
		}
	}()
	return r
}

// emit hands ev to the caller unless the relay was stopped.
func (r *relay[E]) emit(ev E) bool {
	select {
	case r.out <- ev:
		return true
	case <-r.stop:
		return false
	}
}

// inject emits ev among the relayed events; it never blocks (beyond
// relayBuffer pending injections it drops ev).
func (r *relay[E]) inject(ev E) {
	select {
	case r.extra <- ev:
	default:
	}
}

// halt stops the relay and waits for it; closeIn (the inner session's
// Close) runs in between, so a relay blocked on the inner channel ends too.
func (r *relay[E]) halt(closeIn func() error) error {
	r.once.Do(func() { close(r.stop) })
	err := closeIn()
	<-r.exited
	return err
}
