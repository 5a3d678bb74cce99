package vad_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// quietDetector hears nothing: the failover test sends no audio.
type quietDetector struct{}

func (quietDetector) Process([]int16, time.Time, time.Duration) (media.VADEvent, time.Time) {
	return media.VADNone, time.Time{}
}
func (quietDetector) Speaking() bool { return false }

// boom makes the stage panic (a tap in front of it), so it restarts.
type boom struct{}

func panicOnBoom(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if _, ok := env.Message.(*boom); ok {
			panic("injected panic")
		}
		next(c, env)
	}
}

// TestModelFailover: the model unavailable at the stage's start puts one
// failover in the call record (vad, silero to energy); a restart that
// finds it unavailable again switches nothing, one that finds it back
// switches back (energy to silero); a model that works, or a call nobody
// observes, puts none. Mutations caught (seen failing): the switch told
// by every incarnation ("unavailable, restart": two events), From and To
// swapped, the switch back not told ("back after a restart": one event),
// and the observer check dropped with a plain send ("off").
func TestModelFailover(t *testing.T) {
	down := errors.New("no model file")
	toEnergy := messages.Failover{From: "silero", To: "energy"}
	toModel := messages.Failover{From: "energy", To: "silero"}
	cases := []struct {
		name     string
		observed bool
		// starts are the model's answers to each incarnation (true:
		// available); one restart between each two.
		starts []bool
		want   []messages.Failover
	}{
		{name: "unavailable", observed: true, starts: []bool{false}, want: []messages.Failover{toEnergy}},
		{name: "available", observed: true, starts: []bool{true, true}},
		{name: "unavailable, restart", observed: true, starts: []bool{false, false}, want: []messages.Failover{toEnergy}},
		{name: "back after a restart", observed: true, starts: []bool{false, true}, want: []messages.Failover{toEnergy, toModel}},
		{name: "off", starts: []bool{false, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				sys := kit.NewSystem(zerolog.Nop())
				var (
					mu     sync.Mutex
					events []messages.CallEvent
					n      int
				)
				session := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
					if e, ok := ctx.Message().(*messages.CallEvent); ok {
						mu.Lock()
						events = append(events, *e)
						mu.Unlock()
					}
				}))
				model := &vad.Model{
					NewScorer: func() (vad.Scorer, error) {
						mu.Lock()
						ok := c.starts[min(n, len(c.starts)-1)]
						n++
						mu.Unlock()
						if !ok {
							return nil, down
						}
						return &testScorer{samples: 512}, nil
					},
					NewGate: func() vad.Gate { return &testGate{} },
				}
				cfg := vad.Config{NewDetector: func() vad.Detector { return quietDetector{} }, Model: model}
				pid := sys.Root.Spawn(vad.Props(cfg, kit.Peers{Call: "call-1", Session: session, Events: c.observed}, zerolog.Nop(),
					actor.WithReceiverMiddleware(panicOnBoom)))
				for range c.starts[1:] {
					synctest.Wait()
					sys.Root.Send(pid, &boom{})
				}
				synctest.Wait()
				for _, p := range []*actor.PID{pid, session} {
					if err := sys.Root.StopFuture(p).Wait(); err != nil {
						t.Fatal(err)
					}
					synctest.Wait()
				}
				mu.Lock()
				if n != len(c.starts) {
					t.Errorf("%d incarnations started, want %d", n, len(c.starts))
				}
				var got []messages.Failover
				for _, e := range events {
					if e.Kind != messages.EventFailover || e.Text != "vad" || e.Failover == nil {
						t.Errorf("event %v of %q, want a vad failover", e.Kind, e.Text)
						continue
					}
					got = append(got, *e.Failover)
				}
				mu.Unlock()
				if !slices.Equal(got, c.want) {
					t.Errorf("failovers %v, want %v", got, c.want)
				}
				time.Sleep(sys.Config.DeadLetterThrottleInterval + messages.FrameDuration)
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Errorf("%d goroutines left after the actor stopped", n)
				}
			})
		})
	}
}
