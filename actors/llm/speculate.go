package llm

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// Speculation (opt-in, turn.Config.Speculate). When the caller has gone
// quiet and the transcript is final, the turn actor may send the turn
// before the end-of-turn delay has passed, marked Speculative. The llm
// actor answers it as usual — the user message goes into the context and
// the round loop runs, with its ReadOnly tools — but nothing leaves it:
// text, flushes and a fallback line wait in the epoch's held list, and
// the tools actor holds the SideEffect calls. Then:
//
//   - Commit (the caller stayed quiet): the held output goes to TTS in
//     order, the tools actor hears of the turn (the confirmation gate
//     counts it) and, through the round, runs the held calls, and a filler delay owed by a
//     round that waits for tools starts now. The model's first token has
//     usually arrived by then, so the end-of-turn delay hides the
//     request's latency.
//   - Discard (the caller spoke again): the round stops, the context is
//     cut back to before the speculative user message, and the tools
//     actor drops the turn. Nothing was heard, so nothing is kept.
//
// A speculative turn that finds the actor busy (the previous answer is
// not settled) is not started: the Commit carries the turn and it is
// queued then, like any turn.

// out sends a message for the TTS stage, or keeps it while the current
// answer is a speculation.
func (a *Actor) out(ctx actor.Context, m any) {
	if a.cur != nil && a.cur.speculative {
		a.cur.held = append(a.cur.held, m)
		return
	}
	ctx.Send(a.peers.TTS, m)
}

func (a *Actor) speculate(ctx actor.Context, m *messages.UserTurn) {
	if a.busy() {
		a.stats.Inc("speculations_skipped")
		return
	}
	a.stats.Inc("speculations")
	a.pushNotes()
	base := a.conv.Len()
	a.conv.Append(agent.User(m.Text))
	a.begin(m.Epoch)
	a.cur.speculative, a.cur.base = true, base
	a.spawnRound(ctx, m.Epoch)
}

func (a *Actor) commit(ctx actor.Context, m *messages.Commit) {
	turn := m.Turn
	turn.Speculative = false
	if a.cur == nil || a.cur.epoch != turn.Epoch || !a.cur.speculative {
		// No speculation of this turn runs: it is an ordinary turn.
		a.userTurn(ctx, &turn)
		return
	}
	a.stats.Inc("turns")
	a.stats.Inc("speculations_committed")
	a.cur.speculative = false
	ctx.Send(a.peers.Tools, &turn)
	// The commit follows the round's RunTools on the round's own path, so
	// the tools actor never sees a commit before the round it commits.
	if a.cur.round != nil {
		ctx.Send(a.cur.round, m)
	} else {
		ctx.Send(a.peers.Tools, m)
	}
	held := a.cur.held
	a.cur.held = nil
	for _, h := range held {
		ctx.Send(a.peers.TTS, h)
	}
	if a.cur.fillerOwed {
		a.cur.fillerOwed = false
		a.armFiller(ctx)
	}
	a.pushNotes()
}

func (a *Actor) discard(ctx actor.Context, m *messages.Discard) {
	// The tools actor drops the turn whatever this actor knew of it: a
	// round may have reached it on its own path.
	ctx.Send(a.peers.Tools, m)
	if a.cur == nil || a.cur.epoch != m.Epoch || !a.cur.speculative {
		return
	}
	a.stats.Inc("speculations_discarded")
	a.stopRound(ctx)
	a.placeFiller() // stops nothing but an owed delay; no filler was spoken
	a.conv.Truncate(a.cur.base)
	a.cur = nil
	a.drainPending(ctx)
}

// supersede discards a speculation older than e: a newer turn or line
// came without the speculation's Commit or Discard (a restarted turn actor
// forgot it), and the speculation would otherwise hold the actor busy.
func (a *Actor) supersede(ctx actor.Context, e messages.Epoch) {
	if a.cur != nil && a.cur.speculative && a.cur.epoch < e {
		a.discard(ctx, &messages.Discard{Epoch: a.cur.epoch})
	}
}
