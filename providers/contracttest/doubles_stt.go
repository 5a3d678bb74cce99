package contracttest

import (
	"context"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The broken STT doubles. Each wraps a conformant providers.STT (the
// reference: STTWithDeadlines over the mock) and breaks one behaviour.

// relaySTTSession is a session whose events pass through a relay.
type relaySTTSession struct {
	providers.STTSession
	r *relay[providers.STTEvent]
}

func newRelaySTT(s providers.STTSession, step relayStep[providers.STTEvent]) *relaySTTSession {
	return &relaySTTSession{STTSession: s, r: newRelay(s.Events(), step)}
}

func (s *relaySTTSession) Events() <-chan providers.STTEvent { return s.r.out }

func (s *relaySTTSession) Close() error { return s.r.halt(s.STTSession.Close) }

// sttSessions is the STT kind of the generic doubles.
func sttSessions() sessionKind[providers.STTSession, providers.STTEvent] {
	return sessionKind[providers.STTSession, providers.STTEvent]{
		relay: func(s providers.STTSession, step relayStep[providers.STTEvent]) providers.STTSession {
			return newRelaySTT(s, step)
		},
		errOf:   func(ev providers.STTEvent) error { return ev.Err },
		withErr: func(ev providers.STTEvent, err error) providers.STTEvent { ev.Err = err; return ev },
	}
}

// relaySTT is p with every session's events passed through step.
func relaySTT(p providers.STT, step relayStep[providers.STTEvent]) providers.STT {
	return &wrapSessions[providers.STTSession]{p, func(s providers.STTSession) providers.STTSession {
		return newRelaySTT(s, step)
	}}
}

// NoInterims drops every interim: the caller sees finals and failures only.
func NoInterims(p providers.STT) providers.STT {
	return relaySTT(p, func(ev providers.STTEvent, emit func(providers.STTEvent) bool) bool {
		if !ev.Final && ev.Err == nil {
			return true
		}
		return emit(ev)
	})
}

// InterimsAsFinals marks every interim Final, as an adapter that reads the
// service's finality flag wrongly; finals of a Finalize are unchanged.
func InterimsAsFinals(p providers.STT) providers.STT {
	return relaySTT(p, func(ev providers.STTEvent, emit func(providers.STTEvent) bool) bool {
		if ev.Err == nil {
			ev.Final = true
		}
		return emit(ev)
	})
}

// MisMappedSTT turns a refusal with status 429 into a *providers.Protocol,
// from Connect and in the events.
func MisMappedSTT(p providers.STT) providers.STT {
	return &misMappedConnector[providers.STTSession, providers.STTEvent]{p, sttSessions()}
}

// WarmFailsSTT fails every Warm.
func WarmFailsSTT(p providers.STT) providers.STT {
	return &warmReplacedConnector[providers.STTSession]{p, warmFailing}
}

// WarmHangsSTT never returns from Warm until its context ends.
func WarmHangsSTT(p providers.STT) providers.STT {
	return &warmReplacedConnector[providers.STTSession]{p, warmHanging}
}

// WarmSlowsSTT makes the first Connect after a Warm WarmSlowdown slower.
func WarmSlowsSTT(p providers.STT) providers.STT {
	return &warmSlowsConnector[providers.STTSession]{connector: p}
}

// ConnectHangsSTT enforces d for the first event and idle gaps but none
// for the connect: a stalled connect is waited out.
func ConnectHangsSTT(p providers.STT, d time.Duration) (providers.STT, error) {
	return STTWithDeadlines(p, Deadlines{FirstEvent: d, Idle: d})
}

// NoIdleTimeoutSTT enforces d for the connect and the first event only: a
// stall after the first event is waited out.
func NoIdleTimeoutSTT(p providers.STT, d time.Duration) (providers.STT, error) {
	return STTWithDeadlines(p, Deadlines{Connect: d, FirstEvent: d})
}

// EmitsAfterHangUp keeps talking after Close: the inner session is
// closed, but the caller's events stay open and get an interim every
// 100 ms for 5 s or until the session's context ends, as an adapter that
// flushes a backlog after the hang-up.
func EmitsAfterHangUp(p providers.STT) providers.STT { return &emitsAfter{p} }

// EmitsAfterHangUpFor is how long EmitsAfterHangUp keeps talking.
const EmitsAfterHangUpFor = 5 * time.Second

type emitsAfter struct{ providers.STT }

func (e *emitsAfter) Connect(ctx context.Context) (providers.STTSession, error) {
	s, err := e.STT.Connect(ctx)
	if err != nil {
		return nil, err
	}
	es := &emitsAfterSession{STTSession: s, ctx: ctx, out: make(chan providers.STTEvent, relayBuffer), hungUp: make(chan struct{})}
	go es.run()
	return es, nil
}

type emitsAfterSession struct {
	providers.STTSession
	ctx    context.Context
	out    chan providers.STTEvent
	hungUp chan struct{}
	once   sync.Once
}

func (s *emitsAfterSession) run() {
	defer close(s.out)
	for ev := range s.STTSession.Events() {
		select {
		case s.out <- ev:
		case <-s.ctx.Done():
			return
		}
	}
	select {
	case <-s.hungUp:
	default:
		return // ended by itself: nothing to talk about
	}
	end := time.NewTimer(EmitsAfterHangUpFor)
	defer end.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			select {
			case s.out <- providers.STTEvent{Text: "after the hang-up"}:
			default:
			}
		case <-end.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *emitsAfterSession) Events() <-chan providers.STTEvent { return s.out }

func (s *emitsAfterSession) Close() error {
	s.once.Do(func() { close(s.hungUp) })
	return s.STTSession.Close()
}

// LeakySTT ignores the hang-up: Close returns at once and the cancellation
// of the context does not reach p, so the session goes on (and its events
// keep coming) for Linger or until Release.
type LeakySTT struct {
	providers.STT
	*lingerers
}

// NewLeakySTT wraps p into a LeakySTT.
func NewLeakySTT(p providers.STT) *LeakySTT { return &LeakySTT{STT: p, lingerers: newLingerers()} }

// Connect connects p under a context the caller cannot cancel.
func (l *LeakySTT) Connect(ctx context.Context) (providers.STTSession, error) {
	s, err := l.STT.Connect(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	ls := &leakySTTSession{STTSession: s, out: make(chan providers.STTEvent, relayBuffer)}
	l.wg.Go(func() { ls.pump(l.released) })
	return ls, nil
}

type leakySTTSession struct {
	providers.STTSession
	out chan providers.STTEvent
}

func (s *leakySTTSession) pump(released context.Context) {
	defer close(s.out)
	defer s.STTSession.Close()
	linger := time.NewTimer(Linger)
	defer linger.Stop()
	for {
		select {
		case ev, ok := <-s.STTSession.Events():
			if !ok {
				return
			}
			select {
			case s.out <- ev:
			case <-released.Done():
				return
			case <-linger.C:
				return
			}
		case <-released.Done():
			return
		case <-linger.C:
			return
		}
	}
}

func (s *leakySTTSession) Events() <-chan providers.STTEvent { return s.out }

// Close is ignored.
func (s *leakySTTSession) Close() error { return nil }

// StaleSessionSTT hands out a dead session again: after a session failed
// with *providers.Disconnected, the next Connect returns that session
// instead of a new one, as an adapter that caches its connection and does
// not notice it died.
func StaleSessionSTT(p providers.STT) providers.STT {
	return &staleConnector[providers.STTSession, providers.STTEvent]{connector: p, kind: sttSessions()}
}
