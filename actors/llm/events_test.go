package llm

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/rs/zerolog"
)

// scriptedLLM answers each Stream with the next response of its script,
// an event every step; it names itself (providers.Named).
type scriptedLLM struct {
	step      time.Duration
	mu        sync.Mutex
	responses [][]providers.LLMEvent
}

var (
	_ providers.LLM   = (*scriptedLLM)(nil)
	_ providers.Named = (*scriptedLLM)(nil)
)

func (p *scriptedLLM) Stream(ctx context.Context, _ *providers.Request) (providers.LLMStream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.responses) == 0 {
		return &scriptedStream{ctx: ctx, step: p.step, evs: []providers.LLMEvent{{Kind: providers.LLMText, Text: "Nothing more."}, {Kind: providers.LLMDone}}}, nil
	}
	evs := p.responses[0]
	p.responses = p.responses[1:]
	return &scriptedStream{ctx: ctx, step: p.step, evs: evs}, nil
}

func (p *scriptedLLM) Warm(context.Context) error { return nil }
func (p *scriptedLLM) Vendor() string             { return "acme" }
func (p *scriptedLLM) Model() string              { return "acme-large" }

type scriptedStream struct {
	ctx  context.Context
	step time.Duration
	evs  []providers.LLMEvent
}

func (s *scriptedStream) Recv() (providers.LLMEvent, error) {
	if len(s.evs) == 0 {
		return providers.LLMEvent{}, io.EOF
	}
	select {
	case <-time.After(s.step):
	case <-s.ctx.Done():
		return providers.LLMEvent{}, s.ctx.Err()
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}

func (s *scriptedStream) Close() error { return nil }

// eventStandIn is a session that keeps the call events its llm child sends
// and answers the child's RunTools as the tools actor does (each call
// "ok", content "sunny").
type eventStandIn struct {
	observed bool
	mk       func(kit.Peers) *actor.Props
	mu       *sync.Mutex
	events   *[]messages.CallEvent
}

func (s *eventStandIn) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(*messages.RunTools); ok {
				res := &messages.ToolResults{Epoch: m.Epoch, Round: m.Round}
				for _, call := range m.Calls {
					res.Results = append(res.Results, messages.ToolResult{CallID: call.ID, Name: call.Name, Content: "sunny", Outcome: "ok"})
				}
				c.Respond(res)
			}
		}), string(messages.StageTools))
		for _, st := range []messages.Stage{messages.StageTTS, messages.StagePacer, messages.StageTurn} {
			_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), string(st))
		}
		peers := kit.NewPeers("events-call", ctx.Self())
		peers.Events = s.observed
		_, _ = ctx.SpawnNamed(s.mk(peers), string(messages.StageLLM))
	case *messages.CallEvent:
		s.mu.Lock()
		*s.events = append(*s.events, *m)
		s.mu.Unlock()
	}
}

// TestUsageAndRoundEvents: each response's usage report becomes one
// EventUsage with the provider's vendor and model and the tokens as
// reported, and each round of the tool loop one EventRound (numbered from
// 1) at its first token; with nobody observing, the stage sends none.
// Mutations caught (seen failing): the round numbered from 0 (rounds 0,
// 1), the round's event stamped a step before its first token (at the
// request), the cached tokens left out, the vendor not read from the
// provider ("unknown"), and either event sent with a plain send that
// skips the observer check ("off": events sent).
func TestUsageAndRoundEvents(t *testing.T) {
	const step = 100 * time.Millisecond
	script := func() [][]providers.LLMEvent {
		return [][]providers.LLMEvent{
			{
				{Kind: providers.LLMToolCall, Index: 0, ID: "call_1", Name: "weather", Args: `{}`},
				{Kind: providers.LLMUsage, Usage: providers.Usage{InputTokens: 120, OutputTokens: 9, CachedInputTokens: 100}},
				{Kind: providers.LLMDone},
			},
			{
				{Kind: providers.LLMText, Text: "It is sunny."},
				{Kind: providers.LLMUsage, Usage: providers.Usage{InputTokens: 140, OutputTokens: 5}},
				{Kind: providers.LLMDone},
			},
		}
	}
	type line struct {
		kind  messages.EventKind
		epoch messages.Epoch
		round int
		at    time.Duration
		usage messages.ProviderUsage
	}
	usage := func(in, out, cached int) messages.ProviderUsage {
		return messages.ProviderUsage{Kind: messages.UsageLLM, Vendor: "acme", Model: "acme-large", InputTokens: in, OutputTokens: out, CachedTokens: cached}
	}
	cases := []struct {
		name     string
		observed bool
		want     []line
	}{
		{name: "observed", observed: true, want: []line{
			{kind: messages.EventRound, epoch: 1, round: 1, at: step},
			{kind: messages.EventUsage, epoch: 1, at: 2 * step, usage: usage(120, 9, 100)},
			{kind: messages.EventRound, epoch: 1, round: 2, at: 4 * step},
			{kind: messages.EventUsage, epoch: 1, at: 5 * step, usage: usage(140, 5, 0)},
		}},
		{name: "off"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				sys := kit.NewSystem(zerolog.Nop())
				p := &scriptedLLM{step: step, responses: script()}
				var (
					mu     sync.Mutex
					events []messages.CallEvent
				)
				mk := func(peers kit.Peers) *actor.Props { return Props(Config{}, p, peers, zerolog.Nop()) }
				sess := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
					return &eventStandIn{observed: c.observed, mk: mk, mu: &mu, events: &events}
				}))
				synctest.Wait()
				start := time.Now()
				sys.Root.Send(kit.NewPeers("events-call", sess).LLM, &messages.UserTurn{Epoch: 1, Text: "What is the weather?", At: start})
				time.Sleep(2 * time.Second)
				synctest.Wait()
				mu.Lock()
				var got []line
				for _, e := range events {
					l := line{kind: e.Kind, epoch: e.Epoch, round: e.Round, at: e.At.Sub(start)}
					if e.Usage != nil {
						l.usage = *e.Usage
					}
					got = append(got, l)
				}
				mu.Unlock()
				if !slices.Equal(got, c.want) {
					t.Errorf("events\n%+v\nwant\n%+v", got, c.want)
				}
				if err := sys.Root.StopFuture(sess).Wait(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(sys.Config.DeadLetterThrottleInterval + messages.FrameDuration)
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Errorf("%d goroutines left after the call", n)
				}
			})
		})
	}
}
