package tools

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"time"
	"unicode/utf8"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// The trace of a call (the contract's item 10): one debug event
// "tool call settled" when its slot is answered, and "late_result" when a
// SideEffect call finishes after its slot was answered or its round was
// cut. Both carry call_id (the session), epoch, call, tool (at most
// maxTraceToolBytes), outcome, duration_us (from admission, on the actor's
// clock) and retries (the malformed rounds the turn had spent before the
// call's round). Arguments and result contents are never logged: the
// contract's "args (redacted)" is met by leaving them out.
//
// Outcomes are ToolResult.Outcome, with the contract's names. What the
// actor knows maps onto them so:
//
//   - ok, ok_truncated, failed, timed_out, interrupted, lost,
//     result_too_large: as agent.RunAdmitted names them; a SideEffect call
//     stopped by the backstop or panicking is lost;
//   - not_started: RunAdmitted found the round's context already cancelled
//     (its only answer without an outcome, see runAdmitted);
//   - unknown_tool, invalid_arguments, arguments_too_large: the specific
//     kind of a call refused at admission (the actor once named them all
//     "malformed"; the contract's malformed and too_many_calls are the
//     assembler's, answered by the llm actor, which hands the tools actor
//     only their count);
//   - duplicate: a second SideEffect call of a response with the provider
//     id of an earlier one;
//   - stale_turn, budget_exhausted: a refused round, every call;
//   - the orphan table's verdicts (agent.Verdict, whose String names the
//     counters): already_done is repeat_refused, already_reported is
//     repeat_refused too (the model asks again for what its note told it),
//     orphan_replayed is recorded (the record answers), orphan_in_flight is
//     duplicate (the first still runs), orphan_lost is lost;
//   - recorded: the idempotency store answered (a redelivered call id;
//     done, in flight or lost alike);
//   - store_full: the store is full of calls in flight; nothing ran;
//   - timed_out_running: a SideEffect slot answered at its timeout while
//     the call goes on; late_result follows when it finishes;
//   - interrupted_running: a SideEffect call whose round was cut (barge-in)
//     while it ran; late_result follows when it finishes;
//   - interrupted: a ReadOnly call of a cut round, any call cut by a
//     restart of the tools actor (a SideEffect one then settles lost) or by
//     the hang-up.
//
// A call held by a speculative round (speculate.go) emits "tool call
// held" with outcome held when its round is admitted; its settle event
// follows at the commit, or, when the speculation is discarded, as
// not_started.
const (
	outcomeNotStarted         = "not_started"
	outcomeTimedOutRunning    = "timed_out_running"
	outcomeInterruptedRunning = "interrupted_running"
	outcomeRecorded           = "recorded"
	outcomeDuplicate          = agent.OutcomeDuplicate
	outcomeRepeatRefused      = "repeat_refused"
	outcomeStoreFull          = "store_full"
)

// Trace event messages.
const (
	eventSettled    = "tool call settled"
	eventLateResult = "late_result"
)

// maxTraceToolBytes bounds the tool name in a trace event: the model may
// invent a long one.
const maxTraceToolBytes = 64

// maxTraceArgBytes bounds the arguments in a trace event, when the
// operator's debug switch puts them there (Options.LogArguments).
const maxTraceArgBytes = 2048

// trace is what a call's events need; a SideEffect flight keeps its own
// copy, since it outlives its round.
type trace struct {
	epoch    messages.Epoch
	call     string
	tool     string
	admitted time.Time
	retries  int
	args     []byte // nil unless Options.LogArguments
}

// args is call i's arguments for its trace, cut at maxTraceArgBytes (nil
// unless Options.LogArguments).
func (b *batch) args(i int) []byte {
	if !b.logArgs {
		return nil
	}
	a := b.calls[i].Arguments
	if len(a) > maxTraceArgBytes {
		a = a[:maxTraceArgBytes]
	}
	return append([]byte{}, a...)
}

func (b *batch) trace(key batchKey, i int) trace {
	return trace{epoch: key.epoch, call: b.calls[i].ID, tool: b.calls[i].Name, admitted: b.admitted, retries: b.retries, args: b.args(i)}
}

// verdictOutcome names an orphan-table answer with the contract's outcome.
func verdictOutcome(v agent.Verdict) string {
	switch v {
	case agent.VerdictAlreadyDone, agent.VerdictAlreadyReported:
		return outcomeRepeatRefused
	case agent.VerdictOrphanReplayed:
		return outcomeRecorded
	case agent.VerdictOrphanInFlight:
		return outcomeDuplicate
	case agent.VerdictOrphanLost:
		return agent.OutcomeLost
	default:
		return v.String()
	}
}

// runAdmitted is agent.RunAdmitted with an outcome on every answer. Its
// answers without one are a call whose context was done before it started
// (not_started) and an unknown tool, which admission already refused.
func runAdmitted(ctx context.Context, reg *agent.Registry, call messages.ToolCall, info agent.CallInfo) messages.ToolResult {
	r := agent.RunAdmitted(ctx, reg, call, info)
	if r.Outcome == "" {
		if ctx.Err() != nil {
			r.Outcome = outcomeNotStarted
		} else {
			r.Outcome = agent.KindUnknownTool
		}
	}
	return r
}

// answer fills slot i of a waiting round, traces the call as settled and
// puts it on the caller's page.
// Every slot answered after admission goes through here, so each call
// settles once.
func (a *Actor) answer(s actor.SenderContext, key batchKey, b *batch, i int, r messages.ToolResult) {
	b.results[i] = r
	b.remaining--
	a.traceSettled(b.trace(key, i), r.Outcome)
	a.tellSettled(s, key.epoch, b.calls[i], r, b.auditOf(i))
}

// traceAdmitted traces the calls answered while a round was admitted, once
// admission decided (a budget_exhausted round overwrites its malformed
// answers).
func (a *Actor) traceAdmitted(s actor.SenderContext, key batchKey, b *batch) {
	for i, r := range b.results {
		if r.CallID != "" {
			a.traceSettled(b.trace(key, i), r.Outcome)
			a.tellSettled(s, key.epoch, b.calls[i], r, b.auditOf(i))
		}
	}
}

// traceCut traces the open calls of a round cut by an interrupt: its
// ReadOnly calls die with it, its SideEffect calls run on and come back as
// late results.
func (a *Actor) traceCut(s actor.SenderContext, key batchKey, b *batch) {
	for i, c := range b.calls {
		if b.results[i].CallID != "" {
			continue
		}
		outcome := agent.OutcomeInterrupted
		if f, ok := a.inflight[c.ID]; ok && f.batch == key {
			outcome = outcomeInterruptedRunning
		}
		a.traceSettled(b.trace(key, i), outcome)
		a.tellSettled(s, key.epoch, c, messages.ToolResult{CallID: c.ID, Name: c.Name, Outcome: outcome}, b.auditOf(i))
	}
}

// hangUp traces the calls still open when the actor stops: nothing answers
// them any more.
func (a *Actor) hangUp() {
	for key, b := range a.batches {
		for i := range b.calls {
			if b.results[i].CallID == "" {
				a.traceSettled(b.trace(key, i), agent.OutcomeInterrupted)
			}
		}
	}
}

func (a *Actor) traceSettled(t trace, outcome string) { a.traceEvent(eventSettled, t, outcome) }

func (a *Actor) traceLate(t trace, outcome string) { a.traceEvent(eventLateResult, t, outcome) }

func (a *Actor) traceEvent(msg string, t trace, outcome string) {
	ev := a.log.Debug().
		Str("call_id", string(a.peers.Call)).
		Uint64("epoch", uint64(t.epoch)).
		Str("call", t.call).
		Str("tool", cutName(t.tool)).
		Str("outcome", outcome).
		Int64("duration_us", time.Since(t.admitted).Microseconds()).
		Int("retries", t.retries)
	if t.args != nil {
		ev = ev.Bytes("args", t.args)
	}
	ev.Msg(msg)
}

// cutName returns the longest prefix of s of at most maxTraceToolBytes
// that ends on a rune boundary.
func cutName(s string) string {
	if len(s) <= maxTraceToolBytes {
		return s
	}
	n := maxTraceToolBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
