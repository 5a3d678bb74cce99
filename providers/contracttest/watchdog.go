package contracttest

import (
	"context"
	"sync"
	"time"
)

// watchdog relays the events of an STT or TTS session to its own channel
// on one goroutine and enforces the first-event and idle deadlines of a
// streaming session: the deadline runs while the session owes an event,
// from the input that made it owe one (or from the last event, when the
// session still owes one after it), and a session that misses it ends
// with a Timeout event. What is owed is the kind's business: owesAfter
// says it after each event, and the session's inputs arm the watchdog
// with owe. owesAfter may also drop an event (keep false) that the caller
// must not see, as a TTS adapter drops what is left of a cancelled
// context in its own pipeline.
type watchdog[E any] struct {
	d         Deadlines
	in        <-chan E
	out       chan E
	closeIn   func()                       // closes the inner session
	cancel    context.CancelFunc           // the inner session's context
	ended     <-chan struct{}              // that context's Done: the caller's context ended
	owesAfter func(ev E) (keep, owes bool) // under mu: is ev for the caller, is an event still owed after it?
	timeout   func(op string) E            // the failure event
	done      chan struct{}                // closed by close
	exited    chan struct{}                // closed when run returns
	kick      chan struct{}                // one slot: an input armed the deadline
	once      sync.Once

	mu      sync.Mutex
	armed   bool      // an event is owed
	since   time.Time // when the current wait began
	gotSome bool      // an event was relayed: the idle deadline applies
}

// newWatchdog starts the relay of in; close stops it.
func newWatchdog[E any](d Deadlines, in <-chan E, closeIn func(), ctx context.Context, cancel context.CancelFunc,
	owesAfter func(E) (keep, owes bool), timeout func(string) E) *watchdog[E] {
	w := &watchdog[E]{
		d: d, in: in, out: make(chan E, relayBuffer), closeIn: closeIn, cancel: cancel, ended: ctx.Done(),
		owesAfter: owesAfter, timeout: timeout,
		done: make(chan struct{}), exited: make(chan struct{}), kick: make(chan struct{}, 1),
	}
	go w.run()
	return w
}

// relayBuffer is the capacity of the channels of the relaying wrappers.
const relayBuffer = 64

// owe records an input that owes an event; update changes the kind's
// bookkeeping under the watchdog's lock first. The deadline starts now
// unless one is already running.
func (w *watchdog[E]) owe(update func()) {
	w.mu.Lock()
	if update != nil {
		update()
	}
	if !w.armed {
		w.armed, w.since = true, time.Now()
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// close ends the relay and the inner session and waits for the relay.
func (w *watchdog[E]) close() {
	w.once.Do(func() { close(w.done) })
	w.closeIn()
	<-w.exited
	w.cancel()
}

// run relays events until the inner session ends, the deadline passes or
// close is called; it closes out on its way out.
func (w *watchdog[E]) run() {
	defer close(w.exited)
	defer close(w.out)
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		w.mu.Lock()
		var fire <-chan time.Time
		limit, op := w.d.FirstEvent, "first event"
		if w.gotSome {
			limit, op = w.d.Idle, "idle"
		}
		if w.armed && limit > 0 {
			t.Reset(time.Until(w.since.Add(limit)))
			fire = t.C
		}
		w.mu.Unlock()
		select {
		case ev, ok := <-w.in:
			t.Stop()
			if !ok {
				return
			}
			w.mu.Lock()
			w.gotSome = true
			keep, owes := w.owesAfter(ev)
			w.armed, w.since = owes, time.Now()
			w.mu.Unlock()
			if !keep {
				continue
			}
			select {
			case w.out <- ev:
			case <-w.done:
				return
			case <-w.ended:
				return
			}
		case <-fire:
			// The inner session ends before its context, so that the
			// context's end does not pre-empt the Timeout event.
			w.closeIn()
			select {
			case w.out <- w.timeout(op):
			case <-w.done:
			case <-w.ended:
			}
			w.cancel()
			return
		case <-w.kick:
			t.Stop()
		case <-w.done:
			t.Stop()
			return
		case <-w.ended:
			t.Stop()
			return
		}
	}
}
