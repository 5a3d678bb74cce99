package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// The attributes of the spans. Tool spans use OpenTelemetry's GenAI
// names for the tool's name and call id.
var (
	keyCallID     = attribute.Key("brisvox.call.id")
	keyTransport  = attribute.Key("brisvox.transport")
	keyAgent      = attribute.Key("brisvox.agent")
	keyEndReason  = attribute.Key("brisvox.end_reason")
	keyGaveUp     = attribute.Key("brisvox.gave_up")
	keyTurns      = attribute.Key("brisvox.turns")
	keyRestarts   = attribute.Key("brisvox.restarts")
	keyUnfinished = attribute.Key("brisvox.unfinished")
	keyEpoch      = attribute.Key("brisvox.epoch")
	keyAudio      = attribute.Key("brisvox.turn.audio")
	keyLatencyMS  = attribute.Key("brisvox.turn.latency_ms")
	keyCut        = attribute.Key("brisvox.turn.cut")
	keyRound      = attribute.Key("brisvox.llm.round")
	keyToolName   = attribute.Key("gen_ai.tool.name")
	keyToolCallID = attribute.Key("gen_ai.tool.call.id")
	keyOutcome    = attribute.Key("brisvox.tool.outcome")
	keyStage      = attribute.Key("brisvox.stage")
	keyFrom       = attribute.Key("brisvox.failover.from")
	keyTo         = attribute.Key("brisvox.failover.to")
)

// keepBuilt is how many built turns a call keeps for late children (a
// tool call settling after its turn's spans were built).
const keepBuilt = 8

// turnState is one turn as the goroutine gathers it, until its spans are
// built: at its first audio out and end (both seen, in either order),
// when a newer turn begins, or when the call ends.
type turnState struct {
	epoch    messages.Epoch
	userAt   time.Time // the caller's turn ended (EventUserTurn)
	marks    [markSlots]time.Time
	hasMarks bool // EventLatency came: the turn had audio
	done     bool // EventBotDone came
	doneAt   time.Time
	cut      bool
	rounds   []round
	tools    []tool
	// lastAt is the newest time of a round's first token or a tool's
	// settling: the next round's request went after it.
	lastAt time.Time
	built  bool
	ctx    context.Context // the turn span's, once built (nil: none was)
}

type round struct {
	n        int
	from, at time.Time // from: the request (zero: round 1, from the marks)
}

type tool struct {
	name, id, outcome string
	started, settled  time.Time
}

// apply takes one buffered event into the call's trace.
func (c *Call) apply(it *item) {
	switch it.kind {
	case messages.EventRestart:
		c.root.AddEvent("restart", trace.WithTimestamp(it.at), trace.WithAttributes(keyStage.String(it.name)))
		return
	case messages.EventFailover:
		c.root.AddEvent("failover", trace.WithTimestamp(it.at), trace.WithAttributes(
			keyStage.String(it.name), keyFrom.String(it.from), keyTo.String(it.to)))
		return
	}
	ts := c.turn(it.epoch)
	if ts == nil || ts.built {
		c.late(ts, it)
		return
	}
	switch it.kind {
	case messages.EventUserTurn:
		ts.userAt = it.at
	case messages.EventLatency:
		ts.marks, ts.hasMarks = it.marks, true
	case messages.EventBotDone:
		ts.done, ts.doneAt, ts.cut = true, it.at, it.cut
	case messages.EventRound:
		from := ts.lastAt
		if it.round <= 1 {
			from = time.Time{}
		}
		ts.rounds = append(ts.rounds, round{n: it.round, from: from, at: it.at})
		ts.lastAt = later(ts.lastAt, it.at)
	case messages.EventTool:
		ts.tools = append(ts.tools, tool{name: it.name, id: it.id, outcome: it.outcome, started: it.started, settled: it.at})
		ts.lastAt = later(ts.lastAt, it.at)
	}
	if ts.hasMarks && ts.done {
		c.build(ts)
	}
}

// turn finds epoch's turn, or starts it, building every older turn not
// yet built (a newer turn began: they are over). Nil for an event of no
// turn (epoch 0) or of a turn too old to be kept.
func (c *Call) turn(epoch messages.Epoch) *turnState {
	if epoch == 0 {
		return nil
	}
	for _, ts := range c.turns {
		if ts.epoch == epoch {
			return ts
		}
	}
	if epoch < c.newest {
		return nil
	}
	c.newest = epoch
	for _, ts := range c.turns {
		if !ts.built {
			c.build(ts)
		}
	}
	if len(c.turns) >= keepBuilt {
		c.turns = append(c.turns[:0], c.turns[len(c.turns)-keepBuilt+1:]...)
	}
	ts := &turnState{epoch: epoch}
	c.turns = append(c.turns, ts)
	return ts
}

// late takes an event for a turn already built: a round or tool call
// becomes a span of its own under the turn (or the call, when the turn
// made no span or is gone); anything else is counted and dropped.
func (c *Call) late(ts *turnState, it *item) {
	parent := c.rootCtx
	if ts != nil && ts.ctx != nil {
		parent = ts.ctx
	}
	switch it.kind {
	case messages.EventTool:
		c.toolSpan(parent, tool{name: it.name, id: it.id, outcome: it.outcome, started: it.started, settled: it.at})
		if ts != nil {
			ts.lastAt = later(ts.lastAt, it.at)
		}
	case messages.EventRound:
		from := it.at
		if ts != nil && !ts.lastAt.IsZero() {
			from = ts.lastAt
			ts.lastAt = later(ts.lastAt, it.at)
		}
		c.roundSpan(parent, round{n: it.round, from: from, at: it.at})
	default:
		c.t.stats.lateEvents.Add(1)
	}
}

// build makes the turn's spans: the turn, from the end of the caller's
// speech to the first audio out (a turn without audio: from its first
// known time to its last), its stages, LLM rounds and tool calls.
func (c *Call) build(ts *turnState) {
	ts.built = true
	start, end := ts.span()
	if start.IsZero() {
		return // nothing timed (a greeting: no caller's turn, no round, no tool)
	}
	attrs := []attribute.KeyValue{keyEpoch.Int64(int64(ts.epoch)), keyAudio.Bool(ts.hasMarks), keyCut.Bool(ts.cut)}
	if ts.hasMarks {
		attrs = append(attrs, keyLatencyMS.Float64(float64(end.Sub(start))/float64(time.Millisecond)))
	}
	ctx, span := c.t.tracer.Start(c.rootCtx, "turn", trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	ts.ctx = ctx
	c.nTurns++
	c.t.stats.turns.Add(1)
	c.t.stats.spans.Add(1)
	if ts.hasMarks {
		marks := make(map[messages.MarkKind]time.Time, markSlots)
		for k, at := range ts.marks {
			if !at.IsZero() {
				marks[messages.MarkKind(k)] = at
			}
		}
		at := start
		for _, st := range messages.TurnStages(marks) {
			_, s := c.t.tracer.Start(ctx, st.Name, trace.WithTimestamp(at))
			at = at.Add(st.D)
			s.End(trace.WithTimestamp(at))
			c.t.stats.spans.Add(1)
		}
	}
	for _, r := range ts.rounds {
		if r.from.IsZero() {
			r.from = ts.requestAt(r.at)
		}
		c.roundSpan(ctx, r)
	}
	for _, tl := range ts.tools {
		c.toolSpan(ctx, tl)
	}
	ts.rounds, ts.tools = nil, nil
	span.End(trace.WithTimestamp(end))
}

// span is the turn's start and end.
func (ts *turnState) span() (start, end time.Time) {
	if ts.hasMarks {
		start, end = ts.marks[messages.MarkVADStop], ts.marks[messages.MarkFirstAudioOut]
		if !start.IsZero() && !end.Before(start) {
			return start, end
		}
	}
	start, end = ts.userAt, ts.userAt
	for _, r := range ts.rounds {
		start, end = earlier(start, r.at), later(end, r.at)
	}
	for _, tl := range ts.tools {
		start, end = earlier(start, tl.started), later(end, tl.settled)
	}
	if ts.done {
		end = later(end, ts.doneAt)
	}
	return start, end
}

// requestAt is when round 1 was asked for: the llm_request mark, else the
// turn's end, else the caller's turn; at itself when nothing is known.
func (ts *turnState) requestAt(at time.Time) time.Time {
	for _, t := range []time.Time{ts.marks[messages.MarkLLMRequest], ts.marks[messages.MarkTurnEnd], ts.userAt} {
		if !t.IsZero() && !t.After(at) {
			return t
		}
	}
	return at
}

// roundSpan is an LLM round: from its request to its first token.
func (c *Call) roundSpan(parent context.Context, r round) {
	_, s := c.t.tracer.Start(parent, "llm_round", trace.WithTimestamp(r.from), trace.WithAttributes(keyRound.Int(r.n)))
	s.End(trace.WithTimestamp(r.at))
	c.t.stats.spans.Add(1)
}

// toolSpan is a settled tool call: its name, id and contract outcome,
// from its start to its settling; an error when it failed, timed out,
// was lost or answered too much.
func (c *Call) toolSpan(parent context.Context, tl tool) {
	start := tl.started
	if start.IsZero() || start.After(tl.settled) {
		start = tl.settled
	}
	_, s := c.t.tracer.Start(parent, "tool", trace.WithTimestamp(start), trace.WithAttributes(
		keyToolName.String(tl.name), keyToolCallID.String(tl.id), keyOutcome.String(tl.outcome)))
	switch tl.outcome {
	case agent.OutcomeFailed, agent.OutcomeTimedOut, agent.OutcomeLost, agent.OutcomeResultTooLarge:
		s.SetStatus(codes.Error, tl.outcome)
	}
	s.End(trace.WithTimestamp(tl.settled))
	c.t.stats.spans.Add(1)
}

// finish builds the turns left and ends the root span.
func (c *Call) finish(e endInfo) {
	c.finished = true
	for _, ts := range c.turns {
		if !ts.built {
			c.build(ts)
		}
	}
	c.turns = nil
	attrs := []attribute.KeyValue{keyTurns.Int(c.nTurns), keyRestarts.Int(e.restarts)}
	if e.unfinished {
		attrs = append(attrs, keyUnfinished.Bool(true))
		c.t.stats.unfinished.Add(1)
	} else {
		attrs = append(attrs, keyEndReason.String(e.reason))
	}
	if e.gaveUp != "" {
		attrs = append(attrs, keyGaveUp.String(e.gaveUp))
	}
	c.root.SetAttributes(attrs...)
	if e.failed {
		c.root.SetStatus(codes.Error, e.reason)
	}
	c.root.End(trace.WithTimestamp(e.at))
	c.t.stats.spans.Add(1)
}

func later(a, b time.Time) time.Time {
	if a.IsZero() || b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
