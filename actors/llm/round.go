package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

type streamEvent struct {
	round int
	ev    providers.LLMEvent
}
type streamEnded struct {
	round int
	err   error // nil at a clean end
}

// The tool loop has one owner and one path. The round owns the epoch's
// loop: it mints the calls' ids from the sequence the llm actor handed it,
// tells the llm actor what to record (responded, tookResults: one way, no
// answer), has the tools actor run the calls (RunTools, sent with Request
// so the tools actor answers the round itself) and goes on with their
// results. The llm actor owns the context: it records what the round tells
// it, when the epoch is still live. A round waiting for results is closed
// in order (closeRound, roundClosed): the results it took before are
// recorded, and the tools actor learns from the round's end
// (messages.RoundEnded) whether a round left results untaken, which it
// then reports as late notes. A response the llm actor did not record
// because the caller barged in runs nothing: the turn actor sends the
// Interrupt to the tools actor before the llm actor, so a RunTools sent
// after the llm actor's interrupt finds the tools actor past it
// (stale_turn), and one sent before comes after a responded that the llm
// actor recorded before its interrupt.

// responded tells the llm actor what to record of a round's response: the
// assistant message (ids minted by the round) and the answers of its
// invalid calls. next is the id sequence after it; valid are the calls
// the tools actor runs (the filler delay depends on them).
type responded struct {
	epoch     messages.Epoch
	round     int
	assistant agent.Message
	recorded  bool
	invalid   []messages.ToolResult
	// invalidCalls counts the calls the assembler could not read.
	invalidCalls int
	valid        []messages.ToolCall
	next         int
}

// tookResults tells the llm actor to record the results of a round's
// calls, as the round took them from the tools actor.
type tookResults struct {
	epoch   messages.Epoch
	round   int
	results []messages.ToolResult
}

// closeRound asks a round that waits for its tools' results to end (the
// llm actor answers the open calls once it knows what the round took).
type closeRound struct{}

// roundClosed is a round's answer to closeRound: everything it took was
// sent before it.
type roundClosed struct{ epoch messages.Epoch }

// round is the child of the llm actor for one epoch: it runs the request
// loop (one provider stream per round of the tool loop).
type round struct {
	cfg      Config
	provider providers.LLM
	peers    kit.Peers
	epoch    messages.Epoch
	// history is the context as the llm actor gave it at the start (never
	// changed here); turn is what the round added since: its responses
	// and their results, in order. A request is history then turn.
	history []agent.Message
	turn    []agent.Message
	// windowFrom: history messages the call's previous request left out,
	// kept while the request fits so its start stays the same
	// (agent.WindowFrom).
	windowFrom int
	// seq is the next call id's number in the epoch (t<epoch>.<seq>).
	seq int
	// speculative: the turn is not committed yet; the tools actor holds
	// the round's SideEffect calls until the Commit, which the llm actor
	// passes through the round so that it follows the round's RunTools.
	speculative bool

	n        int // current round, from 0
	asm      *agent.Assembler
	gotFirst bool
	done     bool
	// waiting: round n's calls are with the tools actor and their results
	// were not taken yet.
	waiting bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ actor.Actor = (*round)(nil)

// roundStart is what the llm actor hands a new round.
type roundStart struct {
	epoch       messages.Epoch
	history     []agent.Message
	windowFrom  int
	seq         int
	speculative bool
}

func roundProps(cfg Config, p providers.LLM, peers kit.Peers, st roundStart) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &round{cfg: cfg, provider: p, peers: peers, epoch: st.epoch, history: st.history, windowFrom: st.windowFrom, seq: st.seq, speculative: st.speculative}
	}, actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive { return actor.StopDirective })))
}

func epochName(e messages.Epoch) string { return strconv.FormatUint(uint64(e), 10) }

func (r *round) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.start(ctx)
	case *streamEvent:
		if m.round == r.n && !r.done {
			r.event(ctx, m.ev)
		}
	case *streamEnded:
		if m.round == r.n && !r.done {
			r.ended(ctx, m.err)
		}
	case *messages.ToolResults:
		if m.Epoch == r.epoch && m.Round == r.n && r.waiting {
			r.toolResults(ctx, m)
		}
	case *messages.Commit:
		r.speculative = false
		ctx.Send(r.peers.Tools, m)
	case *closeRound:
		ctx.Send(ctx.Parent(), &roundClosed{epoch: r.epoch})
		ctx.Stop(ctx.Self())
	case *actor.Stopping:
		r.stopStream()
		// The tools actor learns whether results were left untaken: it
		// reports those as late notes.
		ctx.Send(r.peers.Tools, &messages.RoundEnded{Epoch: r.epoch, Round: r.n, Waiting: r.waiting})
	case *actor.Restarting:
		r.stopStream()
	case *actor.Stopped:
	}
}

// start sends the request of round r.n.
func (r *round) start(ctx actor.Context) {
	r.asm, _ = agent.NewAssembler(agent.AssemblerConfig{}) // the default config is valid
	r.gotFirst = false
	now := time.Now()
	ctx.Send(ctx.Parent(), &messages.RoundStarted{Epoch: r.epoch, Round: r.n, At: now})
	r.peers.Mark(ctx, r.epoch, messages.MarkLLMRequest, now)
	// The request carries a bounded window of the conversation; the
	// context keeps everything.
	all := r.history
	if len(r.turn) > 0 {
		all = append(r.history[:len(r.history):len(r.history)], r.turn...)
	}
	msgs, ws := agent.WindowFrom(all, r.cfg.Window, r.windowFrom)
	r.windowFrom = ws.Dropped
	ctx.Send(ctx.Parent(), &windowed{stats: ws})
	req := &providers.Request{Messages: msgs, Tools: r.cfg.Tools}
	sctx, cancel := context.WithTimeout(context.Background(), r.cfg.RoundTimeout)
	r.cancel = cancel
	self, root, n, p := ctx.Self(), ctx.ActorSystem().Root, r.n, r.provider
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		s, err := p.Stream(sctx, req)
		if err != nil {
			root.Send(self, &streamEnded{round: n, err: err})
			return
		}
		defer s.Close()
		for {
			ev, err := s.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				if sctx.Err() != nil && !errors.Is(sctx.Err(), context.Canceled) {
					err = &providers.Timeout{Op: "llm round"}
				}
				root.Send(self, &streamEnded{round: n, err: err})
				return
			}
			root.Send(self, &streamEvent{round: n, ev: ev})
		}
	}()
}

func (r *round) event(ctx actor.Context, ev providers.LLMEvent) {
	if !r.gotFirst {
		r.gotFirst = true
		now := time.Now()
		ctx.Send(ctx.Parent(), &messages.RoundFirstToken{Epoch: r.epoch, Round: r.n, At: now})
		r.peers.Mark(ctx, r.epoch, messages.MarkLLMFirstToken, now)
		r.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventRound, Epoch: r.epoch, Round: r.n + 1, At: now})
	}
	switch ev.Kind {
	case providers.LLMText:
		if ev.Text == "" {
			return
		}
		if err := r.asm.AppendText(ev.Text); err != nil {
			r.fail(ctx, err) // the response outgrew its cap
			return
		}
		ctx.Send(ctx.Parent(), &messages.TextDelta{Epoch: r.epoch, Round: r.n, Text: ev.Text})
	case providers.LLMProviderData:
		if err := r.asm.SetProviderData(ev.ProviderData); err != nil {
			ctx.Send(ctx.Parent(), &fragmentRefused{err: err})
		}
	case providers.LLMUsage:
		ctx.Send(ctx.Parent(), &usage{epoch: r.epoch, u: ev.Usage, at: time.Now()})
	case providers.LLMToolCall:
		err := r.asm.AppendCall(agent.CallFragment{Index: ev.Index, ID: ev.ID, Name: ev.Name, Arguments: ev.Args, ProviderData: ev.ProviderData})
		switch {
		case errors.Is(err, agent.ErrResponseTooLarge):
			r.fail(ctx, err)
		case err != nil:
			// A conflicting id or name, or a 33rd call: the fragment is
			// not applied and the call keeps what it had.
			ctx.Send(ctx.Parent(), &fragmentRefused{err: err})
		}
	case providers.LLMDone:
		if ev.StopReason == providers.StopLength {
			// The token limit cut the answer: it is spoken as far as it
			// went, and counted so an operator can raise the limit.
			ctx.Send(ctx.Parent(), &cutByLimit{})
		}
		r.finish(ctx)
	}
}

// fragmentRefused tells the llm actor (for its counters) that a fragment
// was not applied.
type fragmentRefused struct{ err error }

// usage tells the llm actor (for its counters and the call record) a
// response's token counts, as they came.
type usage struct {
	epoch messages.Epoch
	u     providers.Usage
	at    time.Time
}

// cutByLimit tells the llm actor that a response ended at its token limit.
type cutByLimit struct{}

// windowed tells the llm actor how a request was windowed: its counters,
// and the cut the next round starts from.
type windowed struct{ stats agent.WindowStats }

func (r *round) ended(ctx actor.Context, err error) {
	if err != nil {
		r.fail(ctx, err)
		return
	}
	// A stream that ends without Done still counts as complete.
	r.finish(ctx)
}

func (r *round) fail(ctx actor.Context, err error) {
	r.done = true
	ctx.Send(ctx.Parent(), &messages.RoundFailed{Epoch: r.epoch, Round: r.n, Err: err, At: time.Now()})
}

// finish assembles round r.n's response, gives its calls the engine's ids
// (t<epoch>.<seq>, the provider's id kept) and tells the llm actor what to
// record: the assistant message, with the answers of the invalid calls
// right after it, before any call runs. A text answer ends the epoch;
// calls go to the tools actor (invalid ones are answered already) and the
// loop goes on with their results.
func (r *round) finish(ctx actor.Context) {
	if r.done {
		return
	}
	r.done = true
	resp, err := r.asm.Finish()
	if err != nil {
		r.fail(ctx, err)
		return
	}
	invalidCalls := 0
	for i := range resp.Calls {
		c := &resp.Calls[i].Call
		c.ProviderID, c.ID = c.ID, agent.ToolCallID(r.epoch, r.seq)
		r.seq++
		if resp.Calls[i].Invalid != nil {
			invalidCalls++
		}
	}
	msg, ok := resp.AssistantMessage()
	invalid, valid := resp.ErrorResults(), resp.ValidCalls()
	ctx.Send(ctx.Parent(), &responded{epoch: r.epoch, round: r.n, assistant: msg, recorded: ok, invalid: invalid, invalidCalls: invalidCalls, valid: valid, next: r.seq})
	if len(valid) == 0 && len(invalid) == 0 {
		ctx.Send(ctx.Parent(), &messages.EpochDone{Epoch: r.epoch})
		return
	}
	if ok {
		r.turn = append(r.turn, msg)
	}
	for _, res := range invalid {
		r.turn = append(r.turn, agent.ToolMessage(res))
	}
	// Speak the text before the tools while they run. The tools actor
	// admits the round even when only malformed calls came: they spend the
	// turn's retry budget. Request: the tools actor answers the round.
	ctx.Send(ctx.Parent(), &messages.TextFlush{Epoch: r.epoch})
	r.waiting = true
	ctx.Request(r.peers.Tools, &messages.RunTools{Epoch: r.epoch, Round: r.n, Calls: valid, Malformed: len(invalid), Speculative: r.speculative})
}

// toolResults takes round r.n's results: the llm actor records them, and
// the loop goes on.
func (r *round) toolResults(ctx actor.Context, m *messages.ToolResults) {
	r.waiting = false
	ctx.Send(ctx.Parent(), &tookResults{epoch: r.epoch, round: m.Round, results: m.Results})
	for _, res := range m.Results {
		r.turn = append(r.turn, agent.ToolMessage(res))
	}
	if m.BudgetExhausted {
		r.fail(ctx, ErrBudgetExhausted)
		return
	}
	r.next(ctx)
}

// next starts the following round of the loop, within MaxRounds.
func (r *round) next(ctx actor.Context) {
	r.stopStream()
	r.n++
	r.done = false
	if r.n >= r.cfg.MaxRounds {
		r.fail(ctx, fmt.Errorf("%w: %d", ErrMaxRounds, r.cfg.MaxRounds))
		return
	}
	r.start(ctx)
}

// stopStream cancels the provider stream and waits for its goroutine,
// which returns promptly once its context is cancelled (provider contract).
func (r *round) stopStream() {
	if r.cancel != nil {
		r.cancel()
		r.wg.Wait()
		r.cancel = nil
	}
}
