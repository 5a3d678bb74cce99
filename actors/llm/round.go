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

// roundDone carries a round's assembled response to the llm actor, which
// mints the call ids, records the assistant message and answers with a
// roundCommit.
type roundDone struct {
	epoch messages.Epoch
	round int
	resp  *agent.Response
}

// roundCommit is the llm actor's answer to roundDone: the assistant
// message as recorded (ids minted), the calls to run and the answers of the
// invalid ones.
type roundCommit struct {
	assistant agent.Message
	recorded  bool
	valid     []messages.ToolCall
	invalid   []messages.ToolResult
	// speculative: the turn is not committed yet; the tools actor holds
	// the round's SideEffect calls until it is.
	speculative bool
}

// round is the child of the llm actor for one epoch: it runs the request
// loop (one provider stream per round of the tool loop).
type round struct {
	cfg      Config
	provider providers.LLM
	peers    kit.Peers
	epoch    messages.Epoch
	msgs     []agent.Message
	// windowFrom: history messages the call's previous request left out,
	// kept while the request fits so its start stays the same
	// (agent.WindowFrom).
	windowFrom int

	n        int // current round, from 0
	asm      *agent.Assembler
	gotFirst bool
	done     bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func roundProps(cfg Config, p providers.LLM, peers kit.Peers, e messages.Epoch, msgs []agent.Message, windowFrom int) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &round{cfg: cfg, provider: p, peers: peers, epoch: e, msgs: msgs, windowFrom: windowFrom}
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
	case *roundCommit:
		r.committed(ctx, m)
	case *messages.ToolResults:
		if m.Epoch == r.epoch && m.Round == r.n {
			r.toolResults(ctx, m)
		}
	case *actor.Stopping, *actor.Restarting:
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
	// The request carries a bounded window of the conversation; r.msgs
	// (and the context) keep everything.
	msgs, ws := agent.WindowFrom(r.msgs, r.cfg.Window, r.windowFrom)
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
		ctx.Send(ctx.Parent(), &usage{u: ev.Usage})
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

// usage tells the llm actor (for its counters) a response's token counts.
type usage struct{ u providers.Usage }

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

// finish assembles round r.n's response and hands it to the llm actor,
// which records it and answers with a roundCommit.
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
	ctx.Send(ctx.Parent(), &roundDone{epoch: r.epoch, round: r.n, resp: resp})
}

// committed goes on from a recorded response: a text answer ends the
// epoch; calls are run by the tools actor (invalid ones are answered
// already) and the loop goes on with their results.
func (r *round) committed(ctx actor.Context, m *roundCommit) {
	if len(m.valid) == 0 && len(m.invalid) == 0 {
		ctx.Send(ctx.Parent(), &messages.EpochDone{Epoch: r.epoch})
		return
	}
	if m.recorded {
		r.msgs = append(r.msgs[:len(r.msgs):len(r.msgs)], m.assistant)
	}
	for _, res := range m.invalid {
		r.msgs = append(r.msgs, agent.ToolMessage(res))
	}
	// Speak the text before the tools while they run. The tools actor
	// admits the round even when only malformed calls came: they spend the
	// turn's retry budget.
	ctx.Send(ctx.Parent(), &messages.TextFlush{Epoch: r.epoch})
	ctx.Send(r.peers.Tools, &messages.RunTools{Epoch: r.epoch, Round: r.n, Calls: m.valid, Malformed: len(m.invalid), Speculative: m.speculative})
}

func (r *round) toolResults(ctx actor.Context, m *messages.ToolResults) {
	// The llm actor recorded them in the context already.
	for _, res := range m.Results {
		r.msgs = append(r.msgs, agent.ToolMessage(res))
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
