package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// Closed tells the session that the connection ended (the caller hung up
// or the network is gone).
type Closed struct {
	Err error
}

// readFailed is the reader goroutine's last word.
type readFailed struct{ err error }

// markEcho carries an echo from the connection's callback.
type markEcho struct{ name string }

// keyPress carries a key press from the connection's callback.
type keyPress struct{ d messages.DTMF }

// Actor bridges a conn.Conn to the tree.
type Actor struct {
	conn   conn.Conn
	tap    conn.Tap // nil: no recording
	peers  kit.Peers
	pool   *FramePool
	log    zerolog.Logger
	stats  kit.Counters
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// firstOut is the newest epoch whose first audio went out.
	firstOut messages.Epoch
}

// Props makes the transport actor's props. The pool is shared across
// restarts of the actor, so frames in flight stay valid. tap, when not
// nil, sees every frame read (before the vad actor has it) and every frame
// written (before it goes back to the pacer's pool): a call recorder.
func Props(c conn.Conn, tap conn.Tap, peers kit.Peers, log zerolog.Logger, opts ...actor.PropsOption) *actor.Props {
	pool := NewFramePool(c.InputRate())
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{conn: c, tap: tap, peers: peers, pool: pool, log: log, stats: stats}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.start(ctx)
	case *messages.OutputAudio:
		a.write(ctx, m)
	case *messages.Clear:
		a.stats.Inc("clears")
		if err := a.conn.Clear(m.Epoch); err != nil {
			a.stats.Inc("clear_errors")
		}
	case *messages.Mark:
		a.stats.Inc("marks")
		if err := a.conn.Mark(m.Name); err != nil {
			a.stats.Inc("mark_errors")
		}
	case *markEcho:
		a.stats.Inc("mark_echoes")
		ctx.Send(a.peers.Pacer, &messages.MarkEcho{Name: m.name, At: time.Now()})
	case *keyPress:
		a.keyPress(ctx, m)
	case *readFailed:
		a.stats.Inc("read_end")
		ctx.Send(a.peers.Session, &Closed{Err: m.err})
	case *messages.Describe:
		d := kit.Describe(string(messages.StageTransport), "open", a.stats)
		if cd, ok := a.conn.(conn.Describer); ok {
			state, info, counters := cd.Describe()
			d.State, d.Info = state, info
			for k, v := range counters {
				d.Counters["conn_"+k] = v
			}
		}
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Stopping, *actor.Restarting:
		a.stop()
	case *actor.Stopped, *actor.Terminated:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) start(ctx actor.Context) {
	rctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	root := ctx.ActorSystem().Root
	vad, self, tap := a.peers.VAD, a.peers.Transport, a.tap
	a.conn.OnMarkEcho(func(name string) { root.Send(self, &markEcho{name: name}) })
	if r, ok := a.conn.(conn.DTMFReceiver); ok {
		r.OnDTMF(func(d messages.DTMF) { root.Send(self, &keyPress{d: d}) })
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			f := a.pool.Get()
			if err := a.conn.ReadFrame(rctx, f); err != nil {
				f.Release()
				if rctx.Err() == nil {
					root.Send(self, &readFailed{err: err})
				}
				return
			}
			if tap != nil {
				tap.Input(f)
			}
			root.Send(vad, f)
		}
	}()
}

// keyPress hands a key press on to the turn actor, which decides what it
// does. A digit outside the DTMF keys (a Conn's bug) is counted and
// dropped here, so the turn actor sees only keys.
func (a *Actor) keyPress(ctx actor.Context, m *keyPress) {
	if !messages.ValidDTMFDigit(m.d.Digit) {
		a.stats.Inc("dtmf_invalid")
		return
	}
	a.stats.Inc("dtmf")
	d := m.d
	if d.At.IsZero() {
		d.At = time.Now()
	}
	ctx.Send(a.peers.Turn, &d)
}

func (a *Actor) write(ctx actor.Context, f *messages.OutputAudio) {
	if f.Epoch > a.firstOut {
		a.firstOut = f.Epoch
		a.peers.Mark(ctx, f.Epoch, messages.MarkFirstAudioOut, time.Now())
	}
	if err := a.conn.WriteFrame(f); err != nil {
		a.stats.Inc("write_errors")
		if !errors.Is(err, conn.ErrClosed) {
			a.log.Warn().Err(err).Str("call_id", string(a.peers.Call)).Msg("transport write failed")
		}
	} else {
		a.stats.Inc("frames_out")
		if a.tap != nil {
			a.tap.Output(f)
		}
	}
	f.Release()
}

// stop ends the reader and waits for it: ReadFrame returns when its
// context is cancelled (the Conn contract), so the wait is short.
func (a *Actor) stop() {
	if a.cancel != nil {
		a.cancel()
		a.wg.Wait()
		a.cancel = nil
	}
	a.conn.OnMarkEcho(nil)
	if r, ok := a.conn.(conn.DTMFReceiver); ok {
		r.OnDTMF(nil)
	}
}

// String names the actor in logs.
func (a *Actor) String() string { return fmt.Sprintf("transport(%s)", a.peers.Call) }
