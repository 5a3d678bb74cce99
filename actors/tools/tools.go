package tools

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

type batchKey struct {
	epoch messages.Epoch
	round int
}

type batch struct {
	calls     []messages.ToolCall
	results   []messages.ToolResult
	remaining int
	// admitted and retries are the start of each call's trace (observe.go).
	admitted time.Time
	retries  int
	logArgs  bool // Options.LogArguments
	// held are the slots of SideEffect calls of a speculative round, in
	// issue order: they run at the turn's commit (speculate.go).
	held []int
	// round is the round that asked (the sender of RunTools): the results
	// go to it. gone: the round ended before it could take them.
	round *actor.PID
	gone  bool
	// audit is each slot's start and key digest for the call record; nil
	// when the call is not observed.
	audit []slotAudit
}

// auditOf is slot i's audit; a call answered without starting (refused,
// answered in planning) is stamped at its round's admission.
func (b *batch) auditOf(i int) slotAudit {
	if b.audit == nil {
		return slotAudit{}
	}
	au := b.audit[i]
	if au.started.IsZero() {
		au.started = b.admitted
	}
	return au
}

// flight is a SideEffect call running in its own actor.
type flight struct {
	key   agent.IdempotencyKey
	call  messages.ToolCall
	batch batchKey
	trace trace
	// timer answers the slot at the tool's timeout while the call goes on.
	timer *time.Timer
	// answered: the slot was answered (timeout) before the result came.
	answered bool
	// audit is its slot's, for the settle line of a late result.
	audit slotAudit
}

// slotTimeout fires at a SideEffect call's timeout.
type slotTimeout struct{ callID string }

// ledger is what the tools actor keeps across its restarts: the
// idempotency store, the orphan table and the SideEffect calls in flight.
// A SideEffect call must never run twice, whatever happened to the actor.
type ledger struct {
	store    *agent.IdempotencyStore
	orphans  *agent.OrphanTable
	inflight map[string]*flight // by call id
	// confirms holds the requests of tools declared with Confirm; gated
	// says the registry has such a tool (and confirm_pending is offered).
	confirms agent.Confirmations
	gated    bool
	// sent holds the results answered to a round until the round's end
	// (messages.RoundEnded) says whether it took them: results it left
	// are reported as late notes.
	sent map[batchKey][]messages.ToolResult
}

// Actor runs tool calls.
type Actor struct {
	*ledger
	reg   *agent.Registry
	peers kit.Peers
	stats kit.Counters
	log   zerolog.Logger
	// logArgs puts each call's arguments in its trace events (the
	// operator's debug switch, Options.LogArguments).
	logArgs bool

	batches map[batchKey]*batch
	// budget is the newest turn's spent retry budget.
	budget agent.RetryBudget
	// epochCtx cancels the ReadOnly calls of an epoch at its interrupt.
	epochs   map[messages.Epoch]epochCtx
	minEpoch messages.Epoch
	wg       sync.WaitGroup
}

var _ actor.Actor = (*Actor)(nil)

// Props makes the tools actor's props. log is the call's logger: every
// call's settle event goes to it at debug level (observe.go).
func Props(reg *agent.Registry, peers kit.Peers, log zerolog.Logger, opts ...actor.PropsOption) *actor.Props {
	return PropsWith(reg, peers, log, Options{}, opts...)
}

// Options are the tools actor's switches.
type Options struct {
	// LogArguments puts each call's arguments (at most maxTraceArgBytes)
	// in its trace events: a debug switch an operator turns on, never a
	// default (arguments may hold names, numbers, anything the caller
	// said).
	LogArguments bool
}

// PropsWith is Props with options.
func PropsWith(reg *agent.Registry, peers kit.Peers, log zerolog.Logger, o Options, opts ...actor.PropsOption) *actor.Props {
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	// The default configs are valid.
	store, _ := agent.NewIdempotencyStore(agent.IdempotencyConfig{})
	orphans, _ := agent.NewOrphanTable(agent.OrphanConfig{})
	led := &ledger{store: store, orphans: orphans, inflight: map[string]*flight{}, sent: map[batchKey][]messages.ToolResult{}}
	for _, sp := range reg.Specs() {
		led.gated = led.gated || sp.Confirm
	}
	log = log.With().Str("component", "tools").Logger()
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{ledger: led, reg: reg, peers: peers, stats: stats, log: log, logArgs: o.LogArguments, batches: map[batchKey]*batch{}, epochs: map[messages.Epoch]epochCtx{}}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.RunTools:
		a.run(ctx, m)
	case *messages.ToolDone:
		a.done(ctx, m)
	case *slotTimeout:
		a.slotTimeout(ctx, m.callID)
	case *messages.Interrupt:
		a.interrupt(ctx, m.Epoch)
		// The user may not have heard what they would confirm.
		a.confirms.Clear()
	case *messages.UserTurn:
		a.confirms.NoteUserTurn(m.SpeechStart)
	case *messages.RoundEnded:
		a.roundEnded(ctx, m)
	case *messages.Commit:
		a.commit(ctx, m.Turn.Epoch)
	case *messages.Discard:
		a.discard(ctx, m.Epoch)
	case *messages.Describe:
		d := kit.Describe(string(messages.StageTools), "ready", a.stats)
		d.Counters["running_side_effects"] = uint64(len(ctx.Children()))
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Restarting:
		a.stopReadOnly()
		a.loseInFlight(ctx)
	case *actor.Stopping:
		for _, f := range a.inflight {
			f.timer.Stop()
		}
		a.stopReadOnly()
		a.hangUp()
	case *actor.Started, *actor.Stopped, *actor.Terminated:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) run(ctx actor.Context, m *messages.RunTools) {
	key := batchKey{m.Epoch, m.Round}
	b := &batch{calls: m.Calls, results: make([]messages.ToolResult, len(m.Calls)), remaining: len(m.Calls), admitted: time.Now(), logArgs: a.logArgs, round: ctx.Sender()}
	if a.peers.Events {
		b.audit = make([]slotAudit, len(m.Calls))
	}
	if !a.admit(ctx, key, b, m.Malformed) {
		return
	}
	a.batches[key] = b
	// The round passes the turn's Commit on after its RunTools, so a
	// speculative round always arrives before its commit.
	speculative := m.Speculative
	for i, call := range m.Calls {
		if b.results[i].CallID != "" {
			continue // answered in planning
		}
		if speculative && a.holds(call) {
			a.hold(key, b, i)
			continue
		}
		a.start(ctx, key, b, i)
	}
	if b.remaining == 0 {
		a.finish(ctx, key, b)
	}
}

// start runs slot i of an admitted round: a confirmation, a held request
// of the confirmation gate, a SideEffect call in its own actor, or a
// ReadOnly call on a goroutine under the epoch's context. A slot the
// record answers at once is answered here.
func (a *Actor) start(ctx actor.Context, key batchKey, b *batch, i int) {
	call := b.calls[i]
	a.stats.Inc("calls")
	now := time.Now()
	a.tellStart(ctx, key.epoch, call, now)
	if b.audit != nil {
		b.audit[i].started = now
	}
	info := agent.CallInfo{Session: string(a.peers.Call), CallID: call.ID, Epoch: key.epoch, Round: key.round}
	done := &messages.ToolDone{Epoch: key.epoch, Round: key.round, Index: i}
	if a.gated && call.Name == agent.ConfirmPendingTool {
		if res, answered := a.confirm(ctx, call, info, key, b.trace(key, i), done); answered {
			a.answer(ctx, key, b, i, res)
		}
		return
	}
	if _, spec, ok := a.reg.Lookup(call.Name); ok && spec.Effect == agent.SideEffect {
		if spec.Confirm {
			// Held: it runs only when confirmed after the user's reply.
			a.stats.Inc("held")
			a.answer(ctx, key, b, i, a.confirms.Request(call, key.epoch, time.Now()))
			return
		}
		if res, answered := a.sideEffect(ctx, call, spec, info, key, b.trace(key, i), done, false); answered {
			a.answer(ctx, key, b, i, res)
		}
		return
	}
	ectx := a.epochContext(key.epoch)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		done.Result = runAdmitted(ectx, a.reg, call, info) // admitted above
		root.Send(self, done)
	}()
}

// admit plans a round in issue order and admits it by the contract's rules
// (agent.PlanRound, agent.RetryBudget): a refused round answers every call
// and runs nothing; calls refused in planning are answered at once. It
// answers the round itself when nothing is left to run and returns false.
func (a *Actor) admit(ctx actor.Context, key batchKey, b *batch, malformed int) bool {
	if key.epoch < a.minEpoch {
		_, b.retries = a.budget.Admit(key.epoch, a.minEpoch, 0)
		a.stats.Inc("stale_turn")
		b.results, b.remaining = agent.RefusedResults(agent.RefusedStale, b.calls), 0
		a.traceAdmitted(ctx, key, b)
		a.finish(ctx, key, b)
		return false
	}
	plan := agent.PlanRound(a.reg, a.gated, b.calls)
	if plan.Duplicates > 0 {
		a.stats.Add("duplicate", uint64(plan.Duplicates))
	}
	malformed += plan.Malformed
	verdict, retries := a.budget.Admit(key.epoch, a.minEpoch, malformed)
	b.retries = retries
	if malformed > 0 {
		a.stats.Inc("malformed_rounds")
	}
	if verdict == agent.RefusedBudget {
		a.stats.Inc("budget_exhausted")
		b.results, b.remaining = agent.RefusedResults(verdict, b.calls), 0
		a.traceAdmitted(ctx, key, b)
		a.finishExhausted(ctx, key, b)
		return false
	}
	b.results, b.remaining = plan.Answers, plan.Runs()
	a.traceAdmitted(ctx, key, b)
	if b.remaining == 0 {
		a.finish(ctx, key, b)
		return false
	}
	return true
}

// sideEffect runs a SideEffect call in its own actor unless the record
// answers it: an identical call that succeeded earlier in the turn
// (already_done), an orphan of a cut round (still running: duplicate_call;
// reported: already_reported; replayed; lost: unknown_outcome), or a key
// the store already holds. The store full answers store_full without
// running.
func (a *Actor) sideEffect(ctx actor.Context, call messages.ToolCall, spec agent.Spec, info agent.CallInfo, bk batchKey, tr trace, done *messages.ToolDone, gated bool) (messages.ToolResult, bool) {
	now := time.Now()
	key := agent.IdempotencyKey{Session: string(a.peers.Call), Epoch: bk.epoch, CallID: call.ID}
	var au slotAudit
	if a.peers.Events {
		if b, ok := a.batches[bk]; ok && b.audit != nil {
			b.audit[done.Index].keyDigest = keyDigest(key)
			au = b.audit[done.Index]
		}
	}
	tracked := agent.TrackedCall{Key: key, Round: bk.round, Tool: call.Name, Digest: agent.ArgumentsDigest(call.Name, call.Arguments)}
	// A confirmed call takes no part in repeats and orphan replays: the
	// user's reply to the question is its licence, once.
	if m := a.orphans.Check(agent.Probe{TrackedCall: tracked, Repeatable: spec.Repeatable}, now); !gated && m.Verdict != agent.VerdictRun {
		a.stats.Inc(verdictCounter(m.Verdict))
		if m.Verdict == agent.VerdictOrphanReplayed {
			a.orphans.Consume(m.Original)
		}
		res, _ := m.Answer(call)
		res.Outcome = verdictOutcome(m.Verdict)
		return res, true
	}
	entry, found, err := a.store.Begin(key)
	switch {
	case err != nil:
		a.stats.Inc("store_full")
		res := agent.StoreFullResult(call)
		res.Outcome = outcomeStoreFull
		return res, true
	case found:
		a.stats.Inc("side_effect_replays")
		res := entry.Answer(call)
		res.Outcome = outcomeRecorded
		return res, true
	}
	if !gated {
		a.orphans.Start(tracked, now)
	}
	f := &flight{key: key, call: call, batch: bk, trace: tr, audit: au}
	a.inflight[call.ID] = f
	a.stats.Inc("side_effect_calls")
	info.IdempotencyKey = key
	ctx.SpawnPrefix(callProps(a.reg, call, info, done), "call-")
	self, root, id := ctx.Self(), ctx.ActorSystem().Root, call.ID
	f.timer = time.AfterFunc(spec.Timeout, func() { root.Send(self, &slotTimeout{callID: id}) })
	return messages.ToolResult{}, false
}

// epochCtx is the context of an epoch's ReadOnly calls, cancelled at the
// epoch's interrupt.
type epochCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// epochContext returns the epoch's context, made by its first round; the
// later rounds of the epoch share it.
func (a *Actor) epochContext(e messages.Epoch) context.Context {
	if ec, ok := a.epochs[e]; ok {
		return ec.ctx
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.epochs[e] = epochCtx{ctx: ctx, cancel: cancel}
	return ctx
}

func (a *Actor) done(ctx actor.Context, m *messages.ToolDone) {
	if f, ok := a.inflight[m.Result.CallID]; ok {
		delete(a.inflight, m.Result.CallID)
		f.timer.Stop()
		now := time.Now()
		if m.Result.Outcome == agent.OutcomeLost {
			// The backstop stopped it, or it broke down: never run again.
			a.stats.Inc("lost")
			_ = a.store.Lose(f.key) // in flight by construction
			a.orphans.Lose(f.key, now)
		} else {
			_ = a.store.Settle(f.key, m.Result)
			a.orphans.Settle(f.key, m.Result, now)
		}
		if _, waiting := a.batches[f.batch]; !waiting || f.answered {
			// The round is gone: the result reaches the model exactly
			// once, as a note, and a regenerated identical call is told
			// it is already reported.
			a.stats.Inc("side_effect_late_results")
			a.traceLate(f.trace, m.Result.Outcome)
			a.tellSettled(ctx, f.trace.epoch, f.call, m.Result, f.audit)
			a.orphans.MarkReported(f.key)
			ctx.Send(a.peers.LLM, &messages.LateResult{Epoch: m.Epoch, Result: m.Result})
			return
		}
	}
	key := batchKey{m.Epoch, m.Round}
	b, ok := a.batches[key]
	if !ok {
		// A ReadOnly call of a forgotten round (traced at its interrupt).
		if m.Result.Outcome == outcomeNotStarted {
			a.stats.Inc("not_started_cancelled")
		}
		return
	}
	a.answer(ctx, key, b, m.Index, m.Result)
	if b.remaining == 0 {
		a.finish(ctx, key, b)
	}
}

// verdictCounter names the counter of a record's answer (the contract's
// ToolStatsSnapshot names).
func verdictCounter(v agent.Verdict) string {
	switch v {
	case agent.VerdictAlreadyDone:
		return "side_effect_repeats"
	case agent.VerdictOrphanReplayed:
		return "orphan_replays"
	case agent.VerdictAlreadyReported:
		return "orphan_reported"
	case agent.VerdictOrphanInFlight:
		return "orphan_in_flight"
	case agent.VerdictOrphanLost:
		return "orphan_lost"
	}
	return v.String()
}

// confirm runs the held request that a confirm_pending call names, under
// the confirm call's id (its own idempotency key) and through the
// SideEffect path; the request's arguments are run as they were asked.
// A refused confirmation answers why and runs nothing.
func (a *Actor) confirm(ctx actor.Context, call messages.ToolCall, info agent.CallInfo, bk batchKey, tr trace, done *messages.ToolDone) (messages.ToolResult, bool) {
	held, err := a.confirms.Take(agent.ConfirmTarget(call.Arguments), bk.epoch, time.Now())
	var ce *agent.ConfirmError
	if errors.As(err, &ce) {
		a.stats.Inc("confirm_refused")
		return ce.Result(call), true
	}
	_, spec, ok := a.reg.Lookup(held.Name)
	if !ok {
		r := agent.ErrorResult(call, agent.KindUnknownTool, "the confirmed tool is no longer available")
		r.Outcome = agent.KindUnknownTool
		return r, true
	}
	a.stats.Inc("confirmed")
	run := held
	run.ID = call.ID
	return a.sideEffect(ctx, run, spec, info, bk, tr, done, true)
}

// slotTimeout answers a SideEffect call's slot at its timeout, when its
// round still waits: the call keeps running, its result follows as a note,
// and a regenerated identical call is answered from the record.
func (a *Actor) slotTimeout(ctx actor.Context, id string) {
	f, ok := a.inflight[id]
	if !ok || f.answered {
		return
	}
	b, waiting := a.batches[f.batch]
	if !waiting {
		return
	}
	for i, c := range b.calls {
		if c.ID != id || b.results[i].CallID != "" {
			continue
		}
		f.answered = true
		a.stats.Inc("timed_out_running")
		a.orphans.MarkOrphan(f.key, time.Now())
		r := agent.ErrorResult(c, agent.KindTimeout,
			"the call is taking longer than expected and is still running; its result follows as a note: do not repeat it")
		r.Outcome = outcomeTimedOutRunning
		a.answer(ctx, f.batch, b, i, r)
		if b.remaining == 0 {
			a.finish(ctx, f.batch, b)
		}
		return
	}
}

// loseInFlight answers what dies with this incarnation (a restart stops
// the call actors and the ReadOnly calls): a SideEffect call in flight is
// recorded lost, never run again, and answered unknown_outcome — in its
// round's slot when the round still waits, else as a note; a ReadOnly call
// is answered interrupted. Every waiting round gets its results, so none
// waits for an answer that will not come.
func (a *Actor) loseInFlight(ctx actor.Context) {
	now := time.Now()
	lost := func(call messages.ToolCall) messages.ToolResult {
		r := agent.ErrorResult(call, agent.KindUnknownOutcome,
			"the call was cut off while it ran; its outcome is unknown: do not repeat it without asking the caller")
		r.Outcome = agent.OutcomeLost
		return r
	}
	for id, f := range a.inflight {
		delete(a.inflight, id)
		f.timer.Stop()
		_ = a.store.Lose(f.key)
		a.orphans.Lose(f.key, now)
		a.orphans.MarkOrphan(f.key, now)
		a.stats.Inc("lost")
		if b, ok := a.batches[f.batch]; ok && !f.answered {
			for i, c := range b.calls {
				if c.ID == id && b.results[i].CallID == "" {
					a.answer(ctx, f.batch, b, i, lost(c))
				}
			}
			continue
		}
		// Its round is gone, or its slot was answered at its timeout:
		// the model learns of the loss from a note.
		a.traceLate(f.trace, agent.OutcomeLost)
		a.tellSettled(ctx, f.trace.epoch, f.call, lost(f.call), f.audit)
		ctx.Send(a.peers.LLM, &messages.LateResult{Epoch: f.key.Epoch, Result: lost(f.call)})
	}
	for key, b := range a.batches {
		for i, c := range b.calls {
			if b.results[i].CallID == "" {
				r := agent.ErrorResult(c, agent.KindInterrupted, "the call was cut off by a restart of the tools; it may be tried again")
				r.Outcome = agent.OutcomeInterrupted
				a.answer(ctx, key, b, i, r)
			}
		}
		a.finish(ctx, key, b)
	}
}

// stopReadOnly cancels the ReadOnly calls and waits for their goroutines.
func (a *Actor) stopReadOnly() {
	for e, ec := range a.epochs {
		ec.cancel()
		delete(a.epochs, e)
	}
	a.wg.Wait()
}

// finish answers a round's results to the round that asked, which has
// the llm actor record them. They are kept until the round's end says it
// took them (roundEnded): this is the delivery guard, a result is either
// in the context or reported as a note, never lost with a stopped round's
// mailbox. A round already gone never gets them: they are undelivered.
func (a *Actor) finish(ctx actor.Context, key batchKey, b *batch) {
	delete(a.batches, key)
	a.answerRound(ctx, key, b, &messages.ToolResults{Epoch: key.epoch, Round: key.round, Results: b.results})
}

// finishExhausted answers a round refused budget_exhausted: nothing ran
// and the turn ends with the fallback line.
func (a *Actor) finishExhausted(ctx actor.Context, key batchKey, b *batch) {
	a.answerRound(ctx, key, b, &messages.ToolResults{Epoch: key.epoch, Round: key.round, Results: b.results, BudgetExhausted: true})
}

func (a *Actor) answerRound(ctx actor.Context, key batchKey, b *batch, m *messages.ToolResults) {
	if b.gone || b.round == nil {
		a.undelivered(ctx, key.epoch, m.Results)
		return
	}
	a.sent[key] = m.Results
	a.peers.Mark(ctx, key.epoch, messages.MarkToolsDone, time.Now()) // the first round's wins
	ctx.Send(b.round, m)
}

// roundEnded takes a round's last word: the results it was sent and took
// are in the context; results it waited for and did not take, sent or
// still to come, are undelivered.
func (a *Actor) roundEnded(ctx actor.Context, m *messages.RoundEnded) {
	for key, results := range a.sent {
		if key.epoch != m.Epoch {
			continue
		}
		delete(a.sent, key)
		if m.Waiting && key.round == m.Round {
			a.undelivered(ctx, key.epoch, results)
		}
	}
	if b, ok := a.batches[batchKey{m.Epoch, m.Round}]; ok && m.Waiting {
		b.gone = true
	}
}

// undelivered reports the SideEffect results of a round that never reached
// the context as late notes, and marks their calls as orphans.
func (a *Actor) undelivered(ctx actor.Context, epoch messages.Epoch, results []messages.ToolResult) {
	a.stats.Inc("undelivered_results")
	now := time.Now()
	for _, r := range results {
		_, spec, ok := a.reg.Lookup(r.Name)
		if !ok || spec.Effect != agent.SideEffect || spec.Confirm || !ranToResult(r) {
			continue
		}
		key := agent.IdempotencyKey{Session: string(a.peers.Call), Epoch: epoch, CallID: r.CallID}
		a.orphans.MarkOrphan(key, now)
		a.orphans.MarkReported(key)
		a.stats.Inc("undelivered_notes")
		ctx.Send(a.peers.LLM, &messages.LateResult{Epoch: epoch, Result: r})
	}
}

// ranToResult tells whether a result comes from the tool's own run (so the
// action may have happened and the model must hear of it), rather than a
// refusal that ran nothing.
func ranToResult(r messages.ToolResult) bool {
	switch r.Outcome {
	case agent.OutcomeOK, agent.OutcomeOKTruncated, agent.OutcomeFailed, agent.OutcomeLost:
		return true
	}
	return false
}

// interrupt cancels the ReadOnly calls of older epochs and forgets their
// requests; SideEffect children go on.
func (a *Actor) interrupt(ctx actor.Context, e messages.Epoch) {
	if e <= a.minEpoch {
		return
	}
	a.minEpoch = e
	for ep, ec := range a.epochs {
		if ep < e {
			ec.cancel()
			delete(a.epochs, ep)
		}
	}
	for k, b := range a.batches {
		if k.epoch < e {
			for i, c := range b.calls {
				switch _, running := a.inflight[c.ID]; {
				case b.results[i].CallID != "":
				case running:
					a.stats.Inc("side_effect_interrupted")
				default:
					a.stats.Inc("read_only_cancelled")
				}
			}
			a.traceCut(ctx, k, b)
			delete(a.batches, k)
			a.stats.Inc("interrupted_requests")
		}
	}
	// SideEffect calls of the cut rounds go on; a regenerated identical
	// call must be answered from the record, not run again.
	now := time.Now()
	for _, f := range a.inflight {
		if f.batch.epoch < e {
			a.orphans.MarkOrphan(f.key, now)
		}
	}
}
