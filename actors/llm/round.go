package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// callParts collects the fragments of one tool call by index.
type callParts struct {
	id, name string
	args     strings.Builder
}

// round is the child of the llm actor for one epoch: it runs the request
// loop (one provider stream per round of the tool loop).
type round struct {
	cfg      Config
	provider providers.LLM
	peers    kit.Peers
	epoch    messages.Epoch
	msgs     []agent.Message

	n        int // current round, from 0
	text     strings.Builder
	calls    []*callParts
	gotFirst bool
	done     bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func roundProps(cfg Config, p providers.LLM, peers kit.Peers, e messages.Epoch, msgs []agent.Message) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &round{cfg: cfg, provider: p, peers: peers, epoch: e, msgs: msgs}
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
	r.text.Reset()
	r.calls = r.calls[:0]
	r.gotFirst = false
	now := time.Now()
	ctx.Send(ctx.Parent(), &messages.RoundStarted{Epoch: r.epoch, Round: r.n, At: now})
	r.peers.Mark(ctx, r.epoch, messages.MarkLLMRequest, now)
	req := &providers.Request{Messages: r.msgs, Tools: r.cfg.Tools}
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
		r.text.WriteString(ev.Text)
		ctx.Send(ctx.Parent(), &messages.TextDelta{Epoch: r.epoch, Round: r.n, Text: ev.Text})
	case providers.LLMToolCall:
		for len(r.calls) <= ev.Index && ev.Index < 64 {
			r.calls = append(r.calls, &callParts{})
		}
		if ev.Index < 0 || ev.Index >= len(r.calls) {
			return
		}
		c := r.calls[ev.Index]
		if c.id == "" {
			c.id = ev.ID
		}
		if c.name == "" {
			c.name = ev.Name
		}
		c.args.WriteString(ev.Args)
	case providers.LLMDone:
		r.finish(ctx)
	}
}

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

// finish settles round r.n: a text answer ends the epoch, tool calls go to
// the tools actor and the loop goes on with their results.
func (r *round) finish(ctx actor.Context) {
	if r.done {
		return
	}
	r.done = true
	calls := make([]messages.ToolCall, 0, len(r.calls))
	for i, c := range r.calls {
		id := c.id
		if id == "" {
			id = "t" + epochName(r.epoch) + "." + strconv.Itoa(r.n) + "." + strconv.Itoa(i)
		}
		calls = append(calls, messages.ToolCall{ID: id, Name: c.name, Arguments: []byte(c.args.String())})
	}
	text := r.text.String()
	ctx.Send(ctx.Parent(), &messages.RoundEnded{Epoch: r.epoch, Round: r.n, Text: text, Calls: calls, At: time.Now()})
	if len(calls) == 0 {
		ctx.Send(ctx.Parent(), &messages.EpochDone{Epoch: r.epoch})
		return
	}
	r.msgs = append(r.msgs[:len(r.msgs):len(r.msgs)], agent.Assistant(text, calls))
	// Speak the text before the tools while they run.
	ctx.Send(ctx.Parent(), &messages.TextFlush{Epoch: r.epoch})
	ctx.Request(r.peers.Tools, &messages.RunTools{Epoch: r.epoch, Round: r.n, Calls: calls})
}

func (r *round) toolResults(ctx actor.Context, m *messages.ToolResults) {
	ctx.Send(ctx.Parent(), m)
	for _, res := range m.Results {
		r.msgs = append(r.msgs, agent.ToolMessage(res))
	}
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
