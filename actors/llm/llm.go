package llm

import (
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/rs/zerolog"
)

// GetContext asks the llm actor for a copy of its context (tests, the
// simulator's probes, operators). The answer is an *agent.Context.
type GetContext struct{}

// epochState is the answer being produced or settled.
type epochState struct {
	epoch   messages.Epoch
	start   int // index of the first message of the answer
	round   *actor.PID
	partial strings.Builder // text of the running round so far
	settled bool            // cut to what was heard
	asked   bool            // a HeardQuery is out
	// waiting: the round's calls are with the tools actor (a response
	// with calls was recorded and their results were not). closing: the
	// round was asked to close while waiting, for why; the open calls are
	// answered when it has closed (roundClosed), and a Heard that came
	// meanwhile waits in heardLater.
	waiting    bool
	closing    string
	heardLater *messages.Heard
	// filler is the phrase spoken while the current round's tools ran;
	// it goes into the context after their results (never between a call
	// and its result, never into the request that follows).
	filler      string
	fillerTimer *time.Timer
	fillerRound int
	fillerDelay time.Duration
	// A speculative answer (speculate.go) keeps its output in held until
	// the turn's Commit; base is the context's length before its user
	// message, where a Discard cuts it back to. fillerOwed: a round's
	// tools started during the speculation, and their filler delay starts
	// at the commit.
	speculative bool
	base        int
	held        []any
	fillerOwed  bool
}

// fillerDue fires when a round's tools ran for the filler delay.
type fillerDue struct {
	epoch messages.Epoch
	round int
}

// memory is what the llm actor keeps across its restarts: the call's
// context and the answer being settled. Only one incarnation of the actor
// runs at a time, so it needs no lock.
type memory struct {
	conv     *agent.Context
	minEpoch messages.Epoch // older epochs are stale
	cur      *epochState
	pending  []*messages.UserTurn // turns waiting for the previous epoch to settle
	pendSay  []*messages.Say
	// notes are late SideEffect results waiting for a point where no call
	// is open (a note must not separate a call from its result).
	notes []messages.ToolResult
	// fillers counts the filler phrases spoken in the call (the rotation).
	fillers int
	// windowFrom: history messages the last request left out; the next
	// round's requests keep that cut while they fit (agent.WindowFrom).
	windowFrom int
	// idTurn and idNext are the call id sequence: the epoch it counts and
	// the number of its next id, handed to each round it spawns and moved
	// on by what it records (an id of a discarded call is never reused).
	idTurn messages.Epoch
	idNext int
}

// Actor owns the context and the rounds.
type Actor struct {
	*memory
	cfg      Config
	provider providers.LLM
	peers    kit.Peers
	log      zerolog.Logger
	stats    kit.Counters
	// vendor and model name the provider in the call record's usage
	// (providers.NameOf).
	vendor, model string
}

var _ actor.Actor = (*Actor)(nil)

// Props makes the llm actor's props. The context and the answer being
// settled survive a restart of the actor; a round in flight does not: its
// answer ends where it was, and is cut to what was heard like any other.
func Props(cfg Config, p providers.LLM, peers kit.Peers, log zerolog.Logger, opts ...actor.PropsOption) *actor.Props {
	cfg = cfg.WithDefaults()
	mem := &memory{conv: agent.NewContext(cfg.System)}
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	vendor, model := providers.NameOf(p)
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{memory: mem, cfg: cfg, provider: p, peers: peers, log: log, stats: stats, vendor: vendor, model: model}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.UserTurn:
		a.userTurn(ctx, m)
	case *messages.Say:
		a.say(ctx, m)
	case *messages.TextDelta:
		a.delta(ctx, m)
	case *responded:
		a.responded(ctx, m)
	case *tookResults:
		a.tookResults(ctx, m)
	case *roundClosed:
		a.roundClosed(ctx, m)
	case *fillerDue:
		a.fillerDue(ctx, m)
	case *fragmentRefused:
		a.stats.Inc("fragments_refused")
	case *cutByLimit:
		a.stats.Inc("responses_cut_by_limit")
	case *windowed:
		a.windowFrom = m.stats.Dropped
		if m.stats.Windowed() {
			a.stats.Inc("windowed_requests")
			a.stats.Add("window_dropped_messages", uint64(m.stats.Dropped))
			a.stats.Add("window_compacted_results", uint64(m.stats.Compacted))
		}
		if m.stats.Over {
			a.stats.Inc("requests_over_window")
		}
	case *usage:
		a.stats.Add("input_tokens", uint64(max(m.u.InputTokens, 0)))
		a.stats.Add("output_tokens", uint64(max(m.u.OutputTokens, 0)))
		a.stats.Add("cached_input_tokens", uint64(max(m.u.CachedInputTokens, 0)))
		a.tellUsage(ctx, m)
	case *messages.TextFlush:
		if a.live(m.Epoch) {
			a.out(ctx, m)
		}
	case *messages.EpochDone:
		if a.live(m.Epoch) {
			a.stopRound(ctx)
			a.out(ctx, &messages.TextFlush{Epoch: m.Epoch, Final: true})
		}
	case *messages.Commit:
		a.commit(ctx, m)
	case *messages.Discard:
		a.discard(ctx, m)
	case *messages.RoundStarted:
		a.stats.Inc("requests")
	case *messages.RoundFirstToken:
	case *messages.RoundFailed:
		a.roundFailed(ctx, m)
	case *messages.Interrupt:
		a.interrupt(ctx, m)
	case *messages.Heard:
		a.heard(ctx, m)
	case *messages.LateResult:
		a.stats.Inc("late_notes")
		a.notes = append(a.notes, m.Result)
		a.pushNotes()
	case *GetContext:
		cp := agent.NewContext("")
		cp.Append(a.conv.Messages()...)
		ctx.Respond(cp)
	case *messages.Describe:
		state := "idle"
		switch {
		case a.cur != nil && a.cur.speculative:
			state = "speculating"
		case a.cur != nil && !a.cur.settled:
			state = "answering"
		}
		d := kit.Describe(string(messages.StageLLM), state, a.stats)
		d.Counters["context_messages"] = uint64(a.conv.Len())
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Terminated:
		// A closing round is forgotten at its roundClosed, which it sent
		// before it stopped; this system message may overtake it, so a
		// second roundClosed, queued behind it, covers a round that died
		// before it could answer (the first one does the work).
		if a.cur != nil && a.cur.round != nil && a.cur.round.Equal(m.Who) {
			if a.cur.closing != "" {
				ctx.Send(ctx.Self(), &roundClosed{epoch: a.cur.epoch})
			} else {
				a.cur.round = nil
			}
		}
	case *actor.Restarting:
		// The round dies with us (protoactor stops children on restart):
		// keep its text so far, answer its open calls so the context stays
		// valid, and end the answer there, so the pacer settles what was
		// heard and the next incarnation cuts the context to it. A round
		// that waits for its tools (or was closing) may have taken results
		// that are still on their way to us: its close ends in order, at
		// the roundClosed its Terminated queues behind them.
		running := a.cur != nil && !a.cur.settled && a.cur.round != nil
		if running && (a.cur.waiting || a.cur.closing != "") {
			if a.cur.closing == "" {
				a.cur.closing = "the round was restarted"
			}
			a.flushPartial()
		} else {
			a.closeNow(ctx, "the round was restarted")
		}
		if running {
			a.out(ctx, &messages.TextFlush{Epoch: a.cur.epoch, Final: true})
		}
	case *actor.Started, *actor.Stopping, *actor.Stopped:
	default:
		a.stats.Inc("unknown_messages")
	}
}

// live tells whether output of epoch e may still go out.
func (a *Actor) live(e messages.Epoch) bool {
	return a.cur != nil && a.cur.epoch == e && !a.cur.settled && e >= a.minEpoch
}

func (a *Actor) busy() bool { return a.cur != nil && !a.cur.settled }

func (a *Actor) userTurn(ctx actor.Context, m *messages.UserTurn) {
	if m.Epoch < a.minEpoch {
		a.stats.Inc("stale_turns")
		return
	}
	if m.Speculative {
		a.speculate(ctx, m)
		return
	}
	a.supersede(ctx, m.Epoch)
	if a.busy() {
		// The previous answer is not settled yet (its heard words are on
		// their way): keep the turn until it is.
		a.pending = append(a.pending, m)
		return
	}
	a.stats.Inc("turns")
	a.pushNotes()
	a.conv.Append(agent.User(m.Text))
	// The tools actor's confirmation gate counts the user's replies.
	ctx.Send(a.peers.Tools, m)
	a.begin(m.Epoch)
	a.spawnRound(ctx, m.Epoch)
}

// spawnRound starts the round loop of epoch e on the context as it is,
// with the epoch's id sequence.
func (a *Actor) spawnRound(ctx actor.Context, e messages.Epoch) {
	if a.idTurn != e {
		a.idTurn, a.idNext = e, 0
	}
	st := roundStart{epoch: e, history: a.conv.Messages(), windowFrom: a.windowFrom, seq: a.idNext, speculative: a.cur.speculative}
	props := roundProps(a.cfg, a.provider, a.peers, st)
	pid, err := ctx.SpawnNamed(props, "round-"+epochName(e))
	if err != nil {
		a.roundFailed(ctx, &messages.RoundFailed{Epoch: e, Err: err})
		return
	}
	a.cur.round = pid
}

func (a *Actor) say(ctx actor.Context, m *messages.Say) {
	if m.Epoch < a.minEpoch {
		return
	}
	a.supersede(ctx, m.Epoch)
	if a.busy() {
		a.pendSay = append(a.pendSay, m)
		return
	}
	a.begin(m.Epoch)
	a.speak(ctx, m.Epoch, m.Text)
	a.out(ctx, &messages.TextFlush{Epoch: m.Epoch, Final: true})
}

func (a *Actor) begin(e messages.Epoch) {
	a.minEpoch = e
	a.cur = &epochState{epoch: e, start: a.conv.Len()}
}

// speak sends a fixed text as part of the answer and records it.
func (a *Actor) speak(ctx actor.Context, e messages.Epoch, text string) {
	a.flushPartial()
	a.conv.Append(agent.Assistant(text, nil))
	a.out(ctx, &messages.TextDelta{Epoch: e, Text: text})
}

func (a *Actor) delta(ctx actor.Context, m *messages.TextDelta) {
	if !a.live(m.Epoch) {
		a.stats.Inc("stale_deltas")
		return
	}
	a.cur.partial.WriteString(m.Text)
	a.out(ctx, m)
}

// responded records a round's response, as the round minted its ids: the
// assistant message goes into the context once, before any call runs, with
// the answers of the invalid calls right after it. A response of an epoch
// that is no longer live is not recorded.
func (a *Actor) responded(ctx actor.Context, m *responded) {
	if !a.live(m.epoch) || a.cur.round == nil {
		return
	}
	if m.invalidCalls > 0 {
		a.stats.Add("invalid_calls", uint64(m.invalidCalls))
	}
	a.idNext = m.next
	a.cur.partial.Reset()
	if m.recorded {
		a.conv.Append(m.assistant)
	}
	for _, r := range m.invalid {
		a.conv.Append(agent.ToolMessage(r))
	}
	valid := m.valid
	a.cur.waiting = len(valid) > 0 || len(m.invalid) > 0
	if delay, ok := a.fillerDelay(valid); ok {
		a.cur.fillerRound, a.cur.fillerDelay = m.round, delay
		if a.cur.speculative {
			// The delay runs from the commit (speculate.go).
			a.cur.fillerOwed = true
			return
		}
		a.armFiller(ctx)
	}
}

// armFiller starts the filler delay of the current round's tools.
func (a *Actor) armFiller(ctx actor.Context) {
	self, root, due := ctx.Self(), ctx.ActorSystem().Root, &fillerDue{epoch: a.cur.epoch, round: a.cur.fillerRound}
	a.cur.fillerTimer = time.AfterFunc(a.cur.fillerDelay, func() { root.Send(self, due) })
}

// fillerDelay is how long a round's calls may run before a filler: the
// fixed delay when any call has not opted out, or, per tool, the smallest
// delay of the calls that have one. ok is false when the round stays
// silent.
func (a *Actor) fillerDelay(calls []messages.ToolCall) (time.Duration, bool) {
	if !a.cfg.FillerPerTool && a.cfg.FillerAfter <= 0 {
		return 0, false
	}
	best, found := time.Duration(0), false
	for _, c := range calls {
		d := a.cfg.ToolFillers[c.Name]
		if d == 0 { // not listed, or the spec's zero
			d = agent.DefaultFillerAfter
		}
		if d < 0 {
			continue // opted out
		}
		if !a.cfg.FillerPerTool {
			return a.cfg.FillerAfter, true
		}
		if !found || d < best {
			best, found = d, true
		}
	}
	return best, found
}

// fillerDue speaks the next filler phrase when the round's tools are still
// running: the caller is not left in silence.
func (a *Actor) fillerDue(ctx actor.Context, m *fillerDue) {
	if !a.live(m.epoch) || a.cur.fillerTimer == nil || a.cur.fillerRound != m.round || a.cur.filler != "" || a.cur.closing != "" {
		return
	}
	a.cur.fillerTimer = nil
	phrase := a.cfg.Fillers[a.fillers%len(a.cfg.Fillers)]
	a.fillers++
	a.stats.Inc("fillers")
	if a.cfg.Clips != nil && a.cfg.Clips.Has(phrase) {
		a.stats.Inc("filler_clips")
	}
	a.cur.filler = phrase
	a.out(ctx, &messages.Filler{Epoch: m.epoch, Round: m.round, Text: phrase})
}

// placeFiller puts a spoken filler into the context (after the results of
// its round) and stops a filler timer that has not fired.
func (a *Actor) placeFiller() {
	if a.cur == nil {
		return
	}
	a.cur.fillerOwed = false
	if a.cur.fillerTimer != nil {
		a.cur.fillerTimer.Stop()
		a.cur.fillerTimer = nil
	}
	if a.cur.filler != "" {
		a.conv.Append(agent.Assistant(a.cur.filler, nil))
		a.stats.Inc("fillers_in_context")
		a.cur.filler = ""
	}
}

func (a *Actor) roundFailed(ctx actor.Context, m *messages.RoundFailed) {
	if !a.live(m.Epoch) {
		return
	}
	a.stats.Inc("round_failures")
	a.log.Warn().Err(m.Err).Str("call_id", string(a.peers.Call)).Uint64("epoch", uint64(m.Epoch)).Msg("llm round failed; speaking the fallback line")
	a.closeNow(ctx, "the round failed")
	a.speak(ctx, m.Epoch, a.cfg.FallbackLine)
	a.out(ctx, &messages.TextFlush{Epoch: m.Epoch, Final: true})
}

// tookResults records the results the round took from the tools actor.
// Only the round waiting for them sends them, before it closes, so they
// are recorded even when the epoch was interrupted meanwhile (the round
// was asked to close and had taken them first).
func (a *Actor) tookResults(_ actor.Context, m *tookResults) {
	if a.cur == nil || a.cur.epoch != m.epoch || a.cur.round == nil || !a.cur.waiting || a.cur.settled {
		return
	}
	a.cur.waiting = false
	for _, r := range m.results {
		a.conv.Append(agent.ToolMessage(r))
	}
	a.placeFiller()
	a.pushNotes()
}

// pushNotes adds the late results that wait, as long as no call is open
// and no speculation runs (a discarded one would take them back with it).
func (a *Actor) pushNotes() {
	if a.cur != nil && a.cur.speculative {
		return
	}
	for len(a.notes) > 0 {
		if err := a.conv.PushLateToolResult(a.notes[0]); err != nil {
			return // a round's call is open: after its results
		}
		a.notes = a.notes[1:]
	}
}

// flushPartial records the running round's text so far as an assistant
// message, so that a cut can keep what of it was heard.
func (a *Actor) flushPartial() {
	if a.cur == nil || a.cur.partial.Len() == 0 {
		return
	}
	a.conv.Append(agent.Assistant(a.cur.partial.String(), nil))
	a.cur.partial.Reset()
}

// closeRound ends the epoch's running round where it is: it stops the
// round, keeps its text so far, answers its open calls (interrupted, with
// why) and places a filler spoken meanwhile, so the context stays valid and
// holds the words in the order they were played. A round that waits for
// its tools' results is asked to close instead: the results it took
// before are recorded first, and the rest happens at its roundClosed.
func (a *Actor) closeRound(ctx actor.Context, why string) {
	if a.cur != nil && a.cur.closing != "" {
		return // asked already
	}
	if a.cur != nil && a.cur.round != nil && a.cur.waiting {
		a.cur.closing = why
		ctx.Send(a.cur.round, &closeRound{})
		return
	}
	a.closeNow(ctx, why)
}

// closeNow is closeRound on the spot.
func (a *Actor) closeNow(ctx actor.Context, why string) {
	a.stopRound(ctx)
	a.flushPartial()
	a.stats.Add("interrupted_tool_calls", uint64(a.conv.InterruptPendingToolCalls(why)))
	a.placeFiller()
}

// roundClosed ends a round that was asked to close: what it took is
// recorded, so its open calls are answered now, and a Heard that came
// meanwhile settles the epoch.
func (a *Actor) roundClosed(ctx actor.Context, m *roundClosed) {
	if a.cur == nil || a.cur.epoch != m.epoch || a.cur.closing == "" {
		return
	}
	why := a.cur.closing
	a.cur.closing, a.cur.round, a.cur.waiting = "", nil, false
	a.closeNow(ctx, why)
	if h := a.cur.heardLater; h != nil {
		a.cur.heardLater = nil
		a.heard(ctx, h)
	}
}

func (a *Actor) stopRound(ctx actor.Context) {
	if a.cur != nil && a.cur.round != nil {
		ctx.Stop(a.cur.round)
		a.cur.round = nil
	}
}

func (a *Actor) interrupt(ctx actor.Context, m *messages.Interrupt) {
	if m.Epoch <= a.minEpoch && (a.cur == nil || a.cur.epoch >= m.Epoch) {
		return
	}
	a.minEpoch = m.Epoch
	a.stats.Inc("interrupts")
	if a.cur == nil || a.cur.settled {
		return
	}
	a.closeRound(ctx, "interrupted: the caller spoke")
	if !a.cur.asked {
		a.cur.asked = true
		ctx.Send(a.peers.Pacer, &messages.HeardQuery{Epoch: a.cur.epoch})
	}
}

// heard settles an epoch: its assistant messages keep the heard words.
func (a *Actor) heard(ctx actor.Context, m *messages.Heard) {
	if a.cur == nil || a.cur.epoch != m.Epoch || a.cur.settled {
		return
	}
	a.closeRound(ctx, "the answer was cut short")
	if a.cur.closing != "" {
		a.cur.heardLater = m // settled once the round has closed
		return
	}
	total := a.conv.AssistantWords(a.cur.start)
	kept := a.conv.CutAssistantWords(a.cur.start, m.Words)
	if kept < total {
		a.stats.Inc("cuts")
	}
	a.cur.settled = true
	a.drainPending(ctx)
}

func (a *Actor) drainPending(ctx actor.Context) {
	for !a.busy() && (len(a.pending) > 0 || len(a.pendSay) > 0) {
		if len(a.pendSay) > 0 {
			s := a.pendSay[0]
			a.pendSay = a.pendSay[1:]
			a.say(ctx, s)
			continue
		}
		t := a.pending[0]
		a.pending = a.pending[1:]
		a.userTurn(ctx, t)
	}
}
