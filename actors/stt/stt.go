package stt

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// MaxBufferedFrames bounds the audio kept while a session connects: 2 s.
// Older frames are dropped and counted.
const MaxBufferedFrames = 100

type connected struct {
	sess providers.STTSession
	gen  int64
}
type connectFailed struct {
	err error
	gen int64
}
type event struct {
	ev  providers.STTEvent
	gen int64
}
type ended struct{ gen int64 }

// Actor streams the caller's audio to an STT provider.
type Actor struct {
	provider providers.STT
	peers    kit.Peers
	stats    kit.Counters

	done   <-chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sess   providers.STTSession
	gen    int64
	gens   *atomic.Int64

	buffered     []*messages.AudioFrame
	finalizeOwed int
}

// Props makes the stt actor's props.
func Props(p providers.STT, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	gens := new(atomic.Int64) // generations stay unique across restarts
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{provider: p, peers: peers, stats: kit.Counters{}, gens: gens}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.AudioFrame:
		a.audio(m)
	case *messages.SpeechStopped:
		a.finalize()
	case *actor.Started:
		a.connect(ctx)
	case *connected:
		a.onConnected(ctx, m)
	case *connectFailed:
		if m.gen == a.gen {
			a.stats.Inc("connect_failures")
			panic(fmt.Errorf("stt connect: %w", m.err))
		}
	case *event:
		if m.gen == a.gen {
			a.onEvent(ctx, m.ev)
		}
	case *ended:
		if m.gen == a.gen && a.sess != nil {
			panic(&providers.Disconnected{Cause: fmt.Errorf("stt session ended")})
		}
	case *messages.Describe:
		state := "connecting"
		if a.sess != nil {
			state = "streaming"
		}
		d := kit.Describe(string(messages.StageSTT), state, a.stats)
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Restarting:
		a.shutdown()
		// Finals owed by the dead session will not come: the turn must
		// not wait for them.
		ctx.Send(a.peers.Turn, &messages.SttFailed{At: time.Now()})
	case *actor.Stopping:
		a.shutdown()
	case *actor.Stopped:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) connect(ctx actor.Context) {
	cctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, cctx.Done()
	a.gen = a.gens.Add(1)
	gen, self, root, p := a.gen, ctx.Self(), ctx.ActorSystem().Root, a.provider
	a.stats.Inc("connects")
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		sess, err := p.Connect(cctx)
		if err != nil {
			if cctx.Err() == nil {
				root.Send(self, &connectFailed{err: err, gen: gen})
			}
			return
		}
		if cctx.Err() != nil { // the actor went away while connecting
			_ = sess.Close()
			return
		}
		root.Send(self, &connected{sess: sess, gen: gen})
	}()
}

func (a *Actor) onConnected(ctx actor.Context, m *connected) {
	if m.gen != a.gen {
		_ = m.sess.Close()
		return
	}
	a.sess = m.sess
	gen, self, root, sess, done := a.gen, ctx.Self(), ctx.ActorSystem().Root, m.sess, a.done
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for ev := range sess.Events() {
			select {
			case <-done:
				return
			default:
			}
			root.Send(self, &event{ev: ev, gen: gen})
		}
		root.Send(self, &ended{gen: gen})
	}()
	for _, f := range a.buffered {
		a.send(f)
	}
	clear(a.buffered)
	a.buffered = a.buffered[:0]
	for ; a.finalizeOwed > 0; a.finalizeOwed-- {
		a.finalize()
	}
}

func (a *Actor) audio(f *messages.AudioFrame) {
	if a.sess == nil {
		if len(a.buffered) == MaxBufferedFrames {
			a.buffered[0].Release()
			copy(a.buffered, a.buffered[1:])
			a.buffered = a.buffered[:len(a.buffered)-1]
			a.stats.Inc("frames_dropped")
		}
		a.buffered = append(a.buffered, f)
		return
	}
	a.send(f)
}

func (a *Actor) send(f *messages.AudioFrame) {
	if err := a.sess.SendAudio(f.PCM); err != nil {
		a.stats.Inc("send_errors")
	} else {
		a.stats.Inc("frames")
	}
	f.Release()
}

func (a *Actor) finalize() {
	a.stats.Inc("finalizes")
	if a.sess == nil {
		a.finalizeOwed++
		return
	}
	if err := a.sess.Finalize(); err != nil {
		panic(fmt.Errorf("stt finalize: %w", err))
	}
}

func (a *Actor) onEvent(ctx actor.Context, ev providers.STTEvent) {
	if ev.Err != nil {
		a.stats.Inc("session_errors")
		panic(ev.Err)
	}
	if ev.Final {
		a.stats.Inc("finals")
	} else {
		a.stats.Inc("interims")
	}
	ctx.Send(a.peers.Turn, &messages.Transcript{
		Text: ev.Text, Final: ev.Final, SpeechFinal: ev.SpeechFinal, FromFinalize: ev.FromFinalize, At: time.Now(),
	})
}

// shutdown closes the session and waits for the goroutines this actor
// owns: the connect returns when its context is cancelled and the pump when
// Events closes after Close (the provider contract).
func (a *Actor) shutdown() {
	if a.cancel != nil {
		a.cancel()
	}
	if a.sess != nil {
		_ = a.sess.Close()
		a.sess = nil
	}
	a.wg.Wait()
	for _, f := range a.buffered {
		f.Release()
	}
	a.buffered = nil
}
