package llm

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/rs/zerolog"
)

// loopBench runs the llm actor alone under a stand-in session. Its tools
// child records each RunTools with its sender (the round), so the test
// answers the round as the tools actor does; the other peers swallow what
// they get.
type loopBench struct {
	sys  *kit.System
	sess *actor.PID
	llm  *actor.PID
	asks chan asked
}

type asked struct {
	run   *messages.RunTools
	round *actor.PID
}

type loopStandIn struct {
	mk   func(kit.Peers) *actor.Props
	asks chan asked
}

func (s *loopStandIn) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	asks := s.asks
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.RunTools); ok {
			asks <- asked{run: m, round: c.Sender()}
		}
	}), string(messages.StageTools))
	for _, st := range []messages.Stage{messages.StageTTS, messages.StagePacer, messages.StageTurn} {
		_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), string(st))
	}
	_, _ = ctx.SpawnNamed(s.mk(kit.NewPeers("loop-call", ctx.Self())), string(messages.StageLLM))
}

func newLoopBench(t *testing.T, mw actor.ReceiverMiddleware, responses ...providertest.Response) *loopBench {
	t.Helper()
	b := &loopBench{sys: kit.NewSystem(zerolog.Nop()), asks: make(chan asked, 8)}
	mock := providertest.NewMockLLM(providertest.LLMConfig{}, responses...)
	var opts []actor.PropsOption
	if mw != nil {
		opts = append(opts, actor.WithReceiverMiddleware(mw))
	}
	mk := func(p kit.Peers) *actor.Props { return Props(Config{}, mock, p, zerolog.Nop(), opts...) }
	b.sess = b.sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &loopStandIn{mk: mk, asks: b.asks} }))
	b.llm = kit.NewPeers("loop-call", b.sess).LLM
	synctest.Wait()
	return b
}

func (b *loopBench) context(t *testing.T) *agent.Context {
	t.Helper()
	res, err := b.sys.Root.RequestFuture(b.llm, &GetContext{}, time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*agent.Context)
}

func (b *loopBench) stop(t *testing.T) {
	if err := b.sys.Root.StopFuture(b.sess).Wait(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
}

// holdTookResultsUntilInterrupt reproduces the race at the llm actor: the
// round took its results an instant before the caller barged in, and the
// interrupt reaches the llm actor before the round's record does.
func holdTookResultsUntilInterrupt(next actor.ReceiverFunc) actor.ReceiverFunc {
	var held *actor.MessageEnvelope
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		switch env.Message.(type) {
		case *tookResults:
			if held == nil {
				held = env
				return
			}
		case *messages.Interrupt:
			next(c, env)
			if held != nil {
				next(c, held)
				held = nil
			}
			return
		}
		next(c, env)
	}
}

// TestRoundClosesInOrder: a round waiting for its tools is closed in
// order. Results it took before the close are recorded in place, even when
// the interrupt reached the llm actor first; results it never took leave
// the call answered interrupted. Either way the context is valid and each
// call has one answer. (Mutation seen failing: closing a waiting round on
// the spot — the booking it took is answered "interrupted" and its real
// result is dropped.)
func TestRoundClosesInOrder(t *testing.T) {
	tests := []struct {
		name string
		// answer: the round gets the booking's result before the
		// interrupt (held at the llm actor if hold is set).
		answer, hold bool
		want         string
	}{
		{"taken before the close, recorded after the interrupt", true, true, "booked"},
		{"taken before the close", true, false, "booked"},
		{"never taken", false, false, "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mw actor.ReceiverMiddleware
				if tt.hold {
					mw = holdTookResultsUntilInterrupt
				}
				b := newLoopBench(t, mw,
					providertest.Response{Calls: []providertest.ScriptedCall{{ID: "p1", Name: "book", Args: `{}`}}},
					providertest.Response{Text: "Booked."})
				b.sys.Root.Send(b.llm, &messages.UserTurn{Epoch: 1, Text: "Book it."})
				time.Sleep(time.Second)
				ask := <-b.asks
				if ask.round == nil || len(ask.run.Calls) != 1 || ask.run.Calls[0].ID != "t1.0" || ask.run.Calls[0].ProviderID != "p1" {
					t.Fatalf("RunTools %+v from %v", ask.run, ask.round)
				}
				if tt.answer {
					b.sys.Root.Send(ask.round, &messages.ToolResults{Epoch: 1, Results: []messages.ToolResult{
						{CallID: "t1.0", Name: "book", Content: "booked", Outcome: "ok"}}})
					synctest.Wait()
				}
				b.sys.Root.Send(b.llm, &messages.Interrupt{Epoch: 2, At: time.Now()})
				synctest.Wait()
				b.sys.Root.Send(b.llm, &messages.Heard{Epoch: 1, Words: 0, Cut: true})
				synctest.Wait()
				c := b.context(t)
				if err := c.Validate(); err != nil {
					t.Fatalf("%v: %s", err, c.Fingerprint())
				}
				var answers []string
				for i := 0; i < c.Len(); i++ {
					if m := c.At(i); m.Role == agent.RoleTool && m.ToolCallID == "t1.0" {
						answers = append(answers, m.Text)
					}
				}
				if len(answers) != 1 || !strings.Contains(answers[0], tt.want) {
					t.Errorf("answers of t1.0: %q, want one with %q", answers, tt.want)
				}
				b.stop(t)
			})
		})
	}
}

// boom makes the llm actor fail (failOnBoom), so its parent restarts it.
type boom struct{}

// failOnBoom holds the round's record of its results and fails the llm
// actor at a boom, with the record queued again behind it: the round took
// its results an instant before the llm actor failed.
func failOnBoom(next actor.ReceiverFunc) actor.ReceiverFunc {
	var held *actor.MessageEnvelope
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		switch env.Message.(type) {
		case *tookResults:
			if held == nil {
				held = env
				return
			}
		case *boom:
			if held != nil {
				ctx := c.(actor.Context)
				ctx.Send(ctx.Self(), held.Message)
			}
			panic("boom")
		}
		next(c, env)
	}
}

// TestRestartKeepsTakenResults: the llm actor fails while its round waits
// for its tools; the round dies with it, but the results it took just
// before are recorded in place by the next incarnation, and a round that
// had taken none leaves its call answered interrupted. (Mutation seen
// failing: the restart answering a waiting round's calls on the spot — the
// booking it took is answered "interrupted" and its result dropped.)
func TestRestartKeepsTakenResults(t *testing.T) {
	tests := []struct {
		name   string
		answer bool
		want   string
	}{
		{"taken before the failure", true, "booked"},
		{"never taken", false, "the round was restarted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newLoopBench(t, failOnBoom,
					providertest.Response{Calls: []providertest.ScriptedCall{{ID: "p1", Name: "book", Args: `{}`}}},
					providertest.Response{Text: "Booked."})
				b.sys.Root.Send(b.llm, &messages.UserTurn{Epoch: 1, Text: "Book it."})
				time.Sleep(time.Second)
				ask := <-b.asks
				if tt.answer {
					b.sys.Root.Send(ask.round, &messages.ToolResults{Epoch: 1, Results: []messages.ToolResult{
						{CallID: "t1.0", Name: "book", Content: "booked", Outcome: "ok"}}})
					synctest.Wait()
				}
				b.sys.Root.Send(b.llm, &boom{})
				synctest.Wait()
				b.sys.Root.Send(b.llm, &messages.Heard{Epoch: 1, Words: 0, Cut: true})
				synctest.Wait()
				c := b.context(t)
				if err := c.Validate(); err != nil {
					t.Fatalf("%v: %s", err, c.Fingerprint())
				}
				var answers []string
				for i := 0; i < c.Len(); i++ {
					if m := c.At(i); m.Role == agent.RoleTool && m.ToolCallID == "t1.0" {
						answers = append(answers, m.Text)
					}
				}
				if len(answers) != 1 || !strings.Contains(answers[0], tt.want) {
					t.Errorf("answers of t1.0: %q, want one with %q", answers, tt.want)
				}
				b.stop(t)
			})
		})
	}
}
