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

// leadStandIn is a pacer's session whose transport records when each
// frame came, and whose llm records the Heard messages.
type leadStandIn struct {
	cfg    pacer.Config
	frames chan time.Duration
	heard  chan *messages.Heard
	t0     time.Time
}

func (s *leadStandIn) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	peers := kit.NewPeers("lead-call", ctx.Self())
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if f, ok := c.Message().(*messages.OutputAudio); ok {
			s.frames <- time.Since(s.t0)
			f.Release()
		}
	}), string(messages.StageTransport))
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if h, ok := c.Message().(*messages.Heard); ok {
			s.heard <- h
		}
	}), string(messages.StageLLM))
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), string(messages.StageTurn))
	_, _ = ctx.SpawnNamed(pacer.Props(s.cfg, peers), string(messages.StagePacer))
}

// TestStartLead: with StartLead the frames of an answer's start go out
// together (the first and StartLead more), then one a frame period, so a
// transport that starts a talk spurt at two queued frames sends at its
// next tick; the heard position of a cut is not moved by the lead (the
// transport holds it). Mutations caught (seen failing): the lead not
// released (frame 1 at 20 ms), released on every tick (the answer out in
// half its time), the heard position not reduced by the lead while
// playing (one word more than played).
func TestStartLead(t *testing.T) {
	const word = 200 * time.Millisecond
	for _, tc := range []struct {
		name  string
		lead  time.Duration
		at    []time.Duration // the first five frames' release times
		words int             // heard of a cut at 390 ms
	}{
		{"none", 0, []time.Duration{0, 20, 40, 60, 80}, 2},
		{"one frame", 20 * time.Millisecond, []time.Duration{0, 0, 20, 40, 60}, 2},
		{"two frames", 40 * time.Millisecond, []time.Duration{0, 0, 0, 20, 40}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := kit.NewSystem(zerolog.Nop())
				s := &leadStandIn{cfg: pacer.Config{Rate: 8000, StartLead: tc.lead, NoLeadMargin: true},
					frames: make(chan time.Duration, 200), heard: make(chan *messages.Heard, 4), t0: time.Now()}
				sess := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return s }))
				p := kit.NewPeers("lead-call", sess).Pacer
				synctest.Wait()
				for i := range 5 {
					sys.Root.Send(p, &messages.TTSWord{Epoch: 1, Text: "w", Offset: time.Duration(i) * word})
				}
				sys.Root.Send(p, &messages.TTSAudio{Epoch: 1, Rate: 8000, PCM: make([]int16, 8*int(5*word/time.Millisecond))})
				time.Sleep(390 * time.Millisecond)
				sys.Root.Send(p, &messages.Interrupt{Epoch: 8, At: time.Now()})
				synctest.Wait()
				sys.Root.Send(p, &messages.HeardQuery{Epoch: 1})
				time.Sleep(time.Second)
				synctest.Wait()
				for i, want := range tc.at {
					got := <-s.frames
					if got != want*time.Millisecond {
						t.Errorf("frame %d released at %v, want %v", i, got, want*time.Millisecond)
					}
				}
				select {
				case h := <-s.heard:
					if h.Words != tc.words {
						t.Errorf("heard %d words of a cut at 390 ms, want %d", h.Words, tc.words)
					}
				default:
					t.Error("no Heard")
				}
				if err := sys.Root.StopFuture(sess).Wait(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
			})
		})
	}
}
