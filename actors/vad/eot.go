package vad

import (
	"context"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
)

// The end-of-turn model. With a TurnModel configured the actor keeps the
// last EOTWindow of the caller's audio at 16 kHz, and at every speech stop
// asks the model, on a goroutine it owns, whether the turn is complete;
// the answer goes to turn as a messages.TurnEstimate for that stop. One
// question at a time: a stop while the model still runs gets no estimate
// (turn then waits its longest delay for that pause), counted
// eot_skipped. The actor never waits for the model.

// EOTWindow is how much audio the end-of-turn model sees.
const EOTWindow = 8 * time.Second

// eotRate is the model's sample rate.
const eotRate = 16000

// TurnModel says how likely the caller's turn is complete, from the last
// EOTWindow of their audio at 16 kHz (media/eot.Model: eot.Runner, or
// eot.Fixed in tests). It must return when ctx is done.
type TurnModel interface {
	Complete(ctx context.Context, audio []int16) (float32, error)
}

// eotState is the end-of-turn model's state in the actor.
type eotState struct {
	model TurnModel
	ring  []int16 // the last EOTWindow at 16 kHz
	pos   int
	full  bool
	snap  []int16 // the audio handed to the model (owned by the run)
	rs    *media.Resampler
	rsOut []int16
	rate  int

	running bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// eotDone carries the model's answer for the stop at stopAt.
type eotDone struct {
	stopAt time.Time
	p      float32
	err    error
}

func newEOTState(m TurnModel) *eotState {
	n := int(EOTWindow / time.Second * eotRate)
	return &eotState{model: m, ring: make([]int16, n), snap: make([]int16, n)}
}

// listen adds a frame's samples to the ring, converted to 16 kHz.
func (a *Actor) eotListen(pcm []int16, rate int) {
	e := a.eot
	if rate != eotRate {
		if e.rs == nil || e.rate != rate {
			rs, err := media.NewResampler(rate, eotRate, media.ResamplerConfig{})
			if err != nil {
				a.stats.Inc("eot_rate_unsupported")
				return
			}
			e.rs, e.rate = rs, rate
			e.rsOut = make([]int16, rs.MaxOutLen(len(pcm))+eotRate/50)
		}
		if need := e.rs.MaxOutLen(len(pcm)); need > len(e.rsOut) {
			e.rsOut = make([]int16, need)
		}
		n, _ := e.rs.Process(e.rsOut, pcm)
		pcm = e.rsOut[:n]
	}
	for len(pcm) > 0 {
		c := copy(e.ring[e.pos:], pcm)
		pcm = pcm[c:]
		e.pos += c
		if e.pos == len(e.ring) {
			e.pos, e.full = 0, true
		}
	}
}

// eotAsk runs the model on the audio so far, for the stop at stopAt.
func (a *Actor) eotAsk(ctx actor.Context, stopAt time.Time) {
	e := a.eot
	if e.running {
		a.stats.Inc("eot_skipped")
		return
	}
	audio := e.snap[:0]
	if e.full {
		audio = append(audio, e.ring[e.pos:]...)
	}
	audio = append(audio, e.ring[:e.pos]...)
	e.running = true
	a.stats.Inc("eot_asked")
	rctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	self, root, model := ctx.Self(), ctx.ActorSystem().Root, e.model
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer cancel()
		p, err := model.Complete(rctx, audio)
		root.Send(self, &eotDone{stopAt: stopAt, p: p, err: err})
	}()
}

func (a *Actor) eotAnswered(ctx actor.Context, m *eotDone) {
	if a.eot == nil {
		return
	}
	a.eot.running = false
	if m.err != nil {
		a.stats.Inc("eot_errors")
	}
	ctx.Send(a.peers.Turn, &messages.TurnEstimate{StopAt: m.stopAt, P: m.p, Err: m.err})
}

// eotStop cancels a model run and waits for its goroutine.
func (a *Actor) eotStop() {
	if a.eot == nil {
		return
	}
	if a.eot.cancel != nil {
		a.eot.cancel()
	}
	a.eot.wg.Wait()
	a.eot.running = false
}
