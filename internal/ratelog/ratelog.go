package ratelog

import (
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// DefaultEvery is the interval New takes for every <= 0.
const DefaultEvery = time.Second

// MaxCauses is how many distinct causes a Tally counts; the rest are
// counted under OtherCause.
const MaxCauses = 16

// OtherCause counts the causes beyond MaxCauses.
const OtherCause = "other"

// Tally counts events by cause and writes them to its log at most about
// once per interval (see the package doc). Safe for concurrent use.
type Tally struct {
	log      zerolog.Logger
	msg      string
	every    time.Duration
	interval string // every.String(), made once

	mu sync.Mutex
	// pending holds the counts not written yet; causes stay as keys with
	// a zero count once written, so a cause seen before costs no
	// allocation.
	pending map[string]uint64
	waiting uint64 // sum of pending
	timer   *time.Timer
	armed   bool // the timer is set or its function runs
	closed  bool
	// fired is Done when an armed timer's function has ended or the
	// timer was stopped before it ran: Close waits on it.
	fired sync.WaitGroup

	// write serializes writing; only the timer's function and Close hold
	// it. out and keys are its buffers.
	write sync.Mutex
	out   map[string]uint64
	keys  []string
}

// New makes a tally that writes msg to log at level warn, at most one
// summary line per every (DefaultEvery when every <= 0).
func New(log zerolog.Logger, msg string, every time.Duration) *Tally {
	if every <= 0 {
		every = DefaultEvery
	}
	t := &Tally{
		log: log, msg: msg, every: every, interval: every.String(),
		pending: make(map[string]uint64, MaxCauses+1),
		out:     make(map[string]uint64, MaxCauses+1),
		keys:    make([]string, 0, MaxCauses+1),
	}
	t.timer = time.AfterFunc(time.Hour, t.fire)
	t.timer.Stop()
	return t
}

// Add counts one event of cause. The first event after a quiet interval
// is written at once (by the timer, not by the caller); the others are
// summed into the interval's summary. After Close it counts nothing.
func (t *Tally) Add(cause string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if _, seen := t.pending[cause]; !seen && len(t.pending) >= MaxCauses {
		cause = OtherCause
	}
	t.pending[cause]++
	t.waiting++
	if !t.armed {
		t.armed = true
		t.fired.Add(1)
		t.timer.Reset(0)
	}
}

// fire is the timer's function: it writes what is pending and sets the
// timer for the next interval, or lets it rest when nothing was pending.
func (t *Tally) fire() {
	defer t.fired.Done()
	t.write.Lock()
	defer t.write.Unlock()
	wrote := t.flushLocked()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !wrote || t.closed {
		t.armed = false
		return
	}
	t.fired.Add(1)
	t.timer.Reset(t.every)
}

// flushLocked moves the pending counts out and writes them as one line;
// it reports whether there was anything to write. The caller holds
// t.write.
func (t *Tally) flushLocked() bool {
	t.mu.Lock()
	if t.waiting == 0 {
		t.mu.Unlock()
		return false
	}
	for cause, n := range t.pending {
		if n > 0 {
			t.out[cause] = n
			t.pending[cause] = 0
		}
	}
	t.waiting = 0
	t.mu.Unlock()

	t.keys = t.keys[:0]
	for cause := range t.out {
		t.keys = append(t.keys, cause)
	}
	slices.Sort(t.keys)
	if e := t.log.Warn(); e.Enabled() {
		counts := zerolog.Dict()
		for _, cause := range t.keys {
			counts.Uint64(cause, t.out[cause])
		}
		e.Dict("counts", counts).Str("interval", t.interval).Msg(t.msg)
	}
	clear(t.out)
	return true
}

// Close writes what is pending as a last line, stops the timer and
// waits for a line being written. Safe to call more than once.
func (t *Tally) Close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	if t.armed && t.timer.Stop() {
		t.armed = false
		t.fired.Done()
	}
	t.mu.Unlock()
	t.fired.Wait()
	t.write.Lock()
	defer t.write.Unlock()
	t.flushLocked()
}
