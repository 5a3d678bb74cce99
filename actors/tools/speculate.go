package tools

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// Speculation (the contract's item 7). A round of a speculative turn
// (RunTools.Speculative) is planned and admitted like any other — it spends
// the turn's retry budget, since the model was asked — and its ReadOnly
// calls run at once; its SideEffect calls (confirmation requests and
// confirm_pending included) are held: traced "tool call held", not run,
// their slots open. The round's results go out only when every slot is
// answered, so nothing of a speculation reaches the context before its
// commit:
//
//   - Commit runs the held calls, in issue order, through the ordinary
//     SideEffect path (idempotency store, repeats, orphans). It spends no
//     budget. A held call of a superseded turn is answered stale_turn, and
//     one of a turn whose budget was spent since is answered
//     budget_exhausted; neither runs.
//   - Discard drops the turn: its held calls never run (traced
//     not_started), its ReadOnly calls are cancelled, and its epoch is
//     stale from then on, so a round of it still on its way is answered
//     stale_turn.

// Trace event of a held call.
const eventHeld = "tool call held"

// outcomeHeld is the outcome of the held event.
const outcomeHeld = "held"

// holds tells whether a speculative round holds call: everything that
// acts on the world does.
func (a *Actor) holds(call messages.ToolCall) bool {
	if a.gated && call.Name == agent.ConfirmPendingTool {
		return true
	}
	_, spec, ok := a.reg.Lookup(call.Name)
	return ok && spec.Effect == agent.SideEffect
}

// hold keeps slot i of a speculative round for the commit.
func (a *Actor) hold(key batchKey, b *batch, i int) {
	b.held = append(b.held, i)
	a.stats.Inc("speculation_held")
	a.traceEvent(eventHeld, b.trace(key, i), outcomeHeld)
}

// commit runs the held calls of the speculative turn e, round by round.
func (a *Actor) commit(ctx actor.Context, e messages.Epoch) {
	a.stats.Inc("speculations_committed")
	for _, key := range a.heldRounds(e) {
		b := a.batches[key]
		held := b.held
		b.held = nil
		for _, i := range held {
			switch v := a.budget.AdmitHeld(e, a.minEpoch); v {
			case agent.RefusedStale:
				a.stats.Inc("stale_turn")
				a.answer(ctx, key, b, i, agent.RefusedResult(v, b.calls[i]))
			case agent.RefusedBudget:
				a.stats.Inc("budget_exhausted")
				a.answer(ctx, key, b, i, agent.RefusedResult(v, b.calls[i]))
			default:
				a.start(ctx, key, b, i)
			}
		}
		if b.remaining == 0 {
			a.finish(ctx, key, b)
		}
	}
}

// discard drops the speculative turn e: its epoch is stale from now on.
func (a *Actor) discard(ctx actor.Context, e messages.Epoch) {
	a.stats.Inc("speculations_discarded")
	for _, key := range a.heldRounds(e) {
		b := a.batches[key]
		for _, i := range b.held {
			// Answered so that the cut below does not trace them again.
			b.results[i] = messages.ToolResult{CallID: b.calls[i].ID, Outcome: outcomeNotStarted}
			a.traceSettled(b.trace(key, i), outcomeNotStarted)
			a.stats.Inc("speculation_dropped")
		}
		b.held = nil
	}
	a.interrupt(ctx, e+1)
}

// heldRounds lists the rounds of turn e that hold calls, in round order.
func (a *Actor) heldRounds(e messages.Epoch) []batchKey {
	var keys []batchKey
	for key, b := range a.batches {
		if key.epoch == e && len(b.held) > 0 {
			keys = append(keys, key)
		}
	}
	slices.SortFunc(keys, func(x, y batchKey) int { return x.round - y.round })
	return keys
}
