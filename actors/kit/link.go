package kit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// Session is what an actor needs of any provider session it owns: its
// events and a way to end it.
type Session[E any] interface {
	Events() <-chan E
	Close() error
}

// Connected reports a session that Link.Connect opened.
type Connected[S any] struct {
	Sess S
	Gen  int64
}

// ConnectFailed reports a connect that failed.
type ConnectFailed struct {
	Err error
	Gen int64
}

// Event carries one event of the session of generation Gen.
type Event[E any] struct {
	Ev  E
	Gen int64
}

// Ended says the session of generation Gen closed its events.
type Ended struct {
	Gen int64
}

// Link is an actor's one provider session (stt, tts): it connects in a
// goroutine, pumps the session's events into the actor's mailbox, and
// tells a current message from a late one of an earlier session by its
// generation. Generations come from a counter shared by every incarnation
// of the actor, so a message of a session that died with the previous
// incarnation is never taken for the current one's. The goroutines are
// owned by the link: Shutdown stops and waits for them.
type Link[S Session[E], E any] struct {
	gens   *atomic.Int64
	gen    int64
	cancel context.CancelFunc
	done   <-chan struct{}
	wg     sync.WaitGroup
	sess   S
	live   bool
}

// NewLink makes a link whose generations come from gens (kept across the
// actor's restarts).
func NewLink[S Session[E], E any](gens *atomic.Int64) *Link[S, E] {
	return &Link[S, E]{gens: gens}
}

// Connect opens a new session in a goroutine; the actor gets a
// *Connected[S] or a *ConnectFailed. A connect that succeeds after the
// link was shut down closes its session itself.
func (l *Link[S, E]) Connect(ctx actor.Context, connect func(context.Context) (S, error)) {
	cctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, cctx.Done()
	l.gen = l.gens.Add(1)
	gen, self, root := l.gen, ctx.Self(), ctx.ActorSystem().Root
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		sess, err := connect(cctx)
		switch {
		case err != nil:
			if cctx.Err() == nil {
				root.Send(self, &ConnectFailed{Err: err, Gen: gen})
			}
		case cctx.Err() != nil: // the actor went away while connecting
			_ = sess.Close()
		default:
			root.Send(self, &Connected[S]{Sess: sess, Gen: gen})
		}
	}()
}

// Accept takes the session of m if it is the current generation and
// starts pumping its events (*Event[E], then *Ended when they close); a
// late session is closed and Accept returns false.
func (l *Link[S, E]) Accept(ctx actor.Context, m *Connected[S]) bool {
	if m.Gen != l.gen || l.done == nil {
		_ = m.Sess.Close()
		return false
	}
	l.sess, l.live = m.Sess, true
	gen, self, root, events, done := l.gen, ctx.Self(), ctx.ActorSystem().Root, m.Sess.Events(), l.done
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for ev := range events {
			select {
			case <-done:
				return
			default:
			}
			root.Send(self, &Event[E]{Ev: ev, Gen: gen})
		}
		root.Send(self, &Ended{Gen: gen})
	}()
	return true
}

// Current tells whether gen is the generation of the current session.
func (l *Link[S, E]) Current(gen int64) bool { return gen == l.gen }

// Session returns the open session, if there is one.
func (l *Link[S, E]) Session() (S, bool) { return l.sess, l.live }

// Shutdown closes the session and waits for the link's goroutines: the
// connect returns when its context is cancelled and the pump when Events
// closes after Close (the provider contract).
func (l *Link[S, E]) Shutdown() {
	if l.cancel != nil {
		l.cancel()
	}
	if l.live {
		_ = l.sess.Close()
		var zero S
		l.sess, l.live = zero, false
	}
	l.wg.Wait()
}
