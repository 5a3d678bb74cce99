package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/brisvox/brisvox/messages"
)

// The bounds of a call's buffer of events waiting for the tracer's
// goroutine: it is woken at each turn's first audio out and end, and
// when wakeAt events wait; past maxPending (the goroutine far behind)
// events are dropped and counted.
const (
	wakeAt     = 32
	maxPending = 512
)

// markSlots holds a turn's marks by kind (messages.MarkKind values).
const markSlots = int(messages.MarkVADDetected) + 1

// item is what the tracer keeps of one event: times, names and outcomes,
// never content (no Text of a turn or word, no Detail, no arguments).
type item struct {
	kind  messages.EventKind
	epoch messages.Epoch
	at    time.Time
	cut   bool
	round int
	// name: a tool's name (EventTool), the stage (EventRestart,
	// EventFailover). id and outcome: a tool call's id and contract
	// outcome; started when it started. from, to: a failover's providers.
	name, id, outcome string
	from, to          string
	started           time.Time
	marks             [markSlots]time.Time // EventLatency's timeline
}

// endInfo is how a call ended (End), or that the tracer closed first.
type endInfo struct {
	at         time.Time
	reason     string
	gaveUp     string
	failed     bool
	restarts   int
	unfinished bool
}

// Call is one call's trace. Event and End run on the session's
// goroutine and only buffer; the tracer's goroutine builds the spans.
type Call struct {
	t       *Tracer // nil: records nothing (Begin after Close)
	root    trace.Span
	rootCtx context.Context
	traceID string

	mu sync.Mutex
	// pending are the events since the goroutine last took them; spare
	// the slice it handed back (so a warm call appends without
	// allocating).
	pending, spare []item
	ended          bool
	end            endInfo

	// scheduled: c is on the tracer's ready list (under the tracer's mu).
	scheduled bool

	// The goroutine's own: the turns not yet built and the recent ones
	// built (late tool calls become their children), the newest epoch seen.
	turns    []*turnState
	newest   messages.Epoch
	nTurns   int
	finished bool
}

// TraceID is the call's trace id (32 hex digits), "" for a call that
// records nothing.
func (c *Call) TraceID() string { return c.traceID }

// Event buffers what the trace needs of e (times, names and outcomes;
// nothing of its content). It runs on the session's goroutine: a short
// lock and a copy, no allocation once the call's buffers are warm; it
// never blocks. Only settled tool calls (Audit set) count.
func (c *Call) Event(e *messages.CallEvent) {
	if c.t == nil {
		return
	}
	it := item{kind: e.Kind, epoch: e.Epoch, at: e.At}
	wake := false
	switch e.Kind {
	case messages.EventUserTurn:
	case messages.EventLatency:
		for k, at := range e.Marks {
			if k > 0 && int(k) < markSlots {
				it.marks[k] = at
			}
		}
		wake = true
	case messages.EventBotDone:
		it.cut = e.Cut
		wake = true
	case messages.EventRound:
		it.round = e.Round
	case messages.EventTool:
		if e.Audit == nil {
			return // a running line; the settled one carries the audit
		}
		it.name, it.id, it.outcome, it.started = e.Text, e.Call, e.Audit.Outcome, e.Audit.Started
	case messages.EventRestart:
		it.name = e.Text
	case messages.EventFailover:
		if e.Failover == nil {
			return
		}
		it.name, it.from, it.to = e.Text, e.Failover.From, e.Failover.To
	default:
		return
	}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	if len(c.pending) >= maxPending {
		c.mu.Unlock()
		c.t.stats.droppedEvents.Add(1)
		return
	}
	c.pending = append(c.pending, it)
	wake = wake || len(c.pending) >= wakeAt
	c.mu.Unlock()
	if wake {
		c.t.schedule(c)
	}
}

// End closes the call's trace: the root span ends now, with the end
// reason, and its status is an error when the call ended by a failure
// (a stage gave up, or the session's error). The spans of turns not yet
// built are built first. Later events are ignored.
func (c *Call) End(e messages.CallEnded) {
	if c.t == nil {
		return
	}
	info := endInfo{at: time.Now(), reason: e.Reason, gaveUp: string(e.GaveUp), failed: e.GaveUp != "" || e.Err != nil}
	for _, n := range e.Restarts {
		info.restarts += n
	}
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.end = true, info
	c.mu.Unlock()
	c.t.schedule(c)
}
