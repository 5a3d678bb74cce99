package pacer_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// standIn is the session of a pacer alone: its llm child records the
// Heard messages; the other peers swallow what they get.
type standIn struct{ heard chan *messages.Heard }

func (s *standIn) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	peers := kit.NewPeers("heard-call", ctx.Self())
	heard := s.heard
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if h, ok := c.Message().(*messages.Heard); ok {
			heard <- h
		}
	}), string(messages.StageLLM))
	for _, st := range []messages.Stage{messages.StageTransport, messages.StageTurn} {
		_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
			if f, ok := c.Message().(*messages.OutputAudio); ok {
				f.Release()
			}
		}), string(st))
	}
	_, _ = ctx.SpawnNamed(pacer.Props(pacer.Config{Rate: 8000}, peers), string(messages.StagePacer))
}

// TestHeardHasOnePathPerEnd: the llm learns what was heard of an answer
// once. An answer that plays to its end, the pacer ends, and tells (a
// pushed Heard); one cut by an interrupt, the llm ends, and asks (a
// HeardQuery answered from the book, also for an epoch the pacer never
// played). (Mutation seen failing: the pacer pushing a Heard at the
// interrupt too — two Heards of the cut epoch.)
func TestHeardHasOnePathPerEnd(t *testing.T) {
	const word = 300 * time.Millisecond
	tests := []struct {
		name string
		// interruptAt: when Interrupt{2} comes (0: never); query: the
		// epoch the llm asks about after it (0: none).
		interruptAt time.Duration
		query       messages.Epoch
		want        []messages.Heard
	}{
		{"played to its end", 0, 0, []messages.Heard{{Epoch: 1, Words: 3, Position: 3 * word}}},
		{"cut by an interrupt", 450 * time.Millisecond, 1, []messages.Heard{{Epoch: 1, Words: 2, Cut: true}}},
		{"asked of an epoch it never played", time.Millisecond, 7, []messages.Heard{{Epoch: 7, Words: 0, Cut: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := kit.NewSystem(zerolog.Nop())
				heard := make(chan *messages.Heard, 8)
				sess := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &standIn{heard: heard} }))
				p := kit.NewPeers("heard-call", sess).Pacer
				synctest.Wait()
				for i := range 3 {
					sys.Root.Send(p, &messages.TTSWord{Epoch: 1, Text: "w", Offset: time.Duration(i) * word})
				}
				sys.Root.Send(p, &messages.TTSAudio{Epoch: 1, Rate: 8000, PCM: make([]int16, 8*int(3*word/time.Millisecond))})
				sys.Root.Send(p, &messages.TTSEnded{Epoch: 1})
				if tt.interruptAt > 0 {
					time.Sleep(tt.interruptAt)
					sys.Root.Send(p, &messages.Interrupt{Epoch: 8, At: time.Now()})
					synctest.Wait()
					if tt.query != 0 {
						sys.Root.Send(p, &messages.HeardQuery{Epoch: tt.query})
					}
				}
				time.Sleep(3 * time.Second)
				synctest.Wait()
				var got []messages.Heard
				for len(heard) > 0 {
					got = append(got, *<-heard)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("heard %+v, want %+v", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("heard %+v, want %+v", got[i], tt.want[i])
					}
				}
				if err := sys.Root.StopFuture(sess).Wait(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
			})
		})
	}
}
