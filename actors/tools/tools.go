package tools

import (
	"context"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

type batchKey struct {
	epoch messages.Epoch
	round int
}

type batch struct {
	asker     *actor.PID
	results   []messages.ToolResult
	remaining int
}

// Actor runs tool calls.
type Actor struct {
	reg   *agent.Registry
	peers kit.Peers
	stats kit.Counters

	batches map[batchKey]*batch
	// epochCtx cancels the ReadOnly calls of an epoch at its interrupt.
	epochs   map[messages.Epoch]context.CancelFunc
	minEpoch messages.Epoch
	wg       sync.WaitGroup
}

// Props makes the tools actor's props.
func Props(reg *agent.Registry, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{reg: reg, peers: peers, stats: stats, batches: map[batchKey]*batch{}, epochs: map[messages.Epoch]context.CancelFunc{}}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.RunTools:
		a.run(ctx, m)
	case *messages.ToolDone:
		a.done(ctx, m)
	case *messages.Interrupt:
		a.interrupt(m.Epoch)
	case *messages.Describe:
		d := kit.Describe(string(messages.StageTools), "ready", a.stats)
		d.Counters["running_side_effects"] = uint64(len(ctx.Children()))
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Stopping, *actor.Restarting:
		for e, cancel := range a.epochs {
			cancel()
			delete(a.epochs, e)
		}
		a.wg.Wait()
	case *actor.Started, *actor.Stopped, *actor.Terminated:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) run(ctx actor.Context, m *messages.RunTools) {
	if m.Epoch < a.minEpoch {
		a.stats.Inc("stale_requests")
		return
	}
	key := batchKey{m.Epoch, m.Round}
	b := &batch{asker: ctx.Sender(), results: make([]messages.ToolResult, len(m.Calls)), remaining: len(m.Calls)}
	a.batches[key] = b
	ectx := a.epochContext(m.Epoch)
	self, root := ctx.Self(), ctx.ActorSystem().Root
	for i, call := range m.Calls {
		a.stats.Inc("calls")
		info := agent.CallInfo{CallID: call.ID, Epoch: m.Epoch, Round: m.Round}
		done := &messages.ToolDone{Epoch: m.Epoch, Round: m.Round, Index: i}
		if _, spec, ok := a.reg.Lookup(call.Name); ok && spec.Effect == agent.SideEffect {
			a.stats.Inc("side_effect_calls")
			ctx.SpawnPrefix(callProps(a.reg, call, info, done), "call-")
			continue
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			done.Result = agent.RunCall(ectx, a.reg, call, info)
			root.Send(self, done)
		}()
	}
	if len(m.Calls) == 0 {
		a.finish(ctx, key, b)
	}
}

func (a *Actor) epochContext(e messages.Epoch) context.Context {
	// One context per epoch; a new one replaces nothing (epochs are unique).
	ctx, cancel := context.WithCancel(context.Background())
	if old, ok := a.epochs[e]; ok {
		old()
	}
	a.epochs[e] = cancel
	return ctx
}

func (a *Actor) done(ctx actor.Context, m *messages.ToolDone) {
	key := batchKey{m.Epoch, m.Round}
	b, ok := a.batches[key]
	if !ok {
		// The round is gone: a SideEffect result still reaches the model.
		a.stats.Inc("late_results")
		ctx.Send(a.peers.LLM, &llm.LateResult{Epoch: m.Epoch, Result: m.Result})
		return
	}
	b.results[m.Index] = m.Result
	b.remaining--
	if b.remaining == 0 {
		a.finish(ctx, key, b)
	}
}

func (a *Actor) finish(ctx actor.Context, key batchKey, b *batch) {
	delete(a.batches, key)
	if b.asker != nil {
		ctx.Send(b.asker, &messages.ToolResults{Epoch: key.epoch, Round: key.round, Results: b.results})
	}
}

// interrupt cancels the ReadOnly calls of older epochs and forgets their
// requests; SideEffect children go on.
func (a *Actor) interrupt(e messages.Epoch) {
	if e <= a.minEpoch {
		return
	}
	a.minEpoch = e
	for ep, cancel := range a.epochs {
		if ep < e {
			cancel()
			delete(a.epochs, ep)
		}
	}
	for k := range a.batches {
		if k.epoch < e {
			delete(a.batches, k)
			a.stats.Inc("interrupted_requests")
		}
	}
}
