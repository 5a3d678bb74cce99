package contracttest

import (
	"context"
	"errors"
	"sync"

	"github.com/brisvox/brisvox/providers"
)

// The machinery of the broken STT and TTS doubles, written once for both
// kinds: a providers.STT and a providers.TTS differ only in their
// session type S (and its event type E), so each double here is generic
// over them and doubles_stt.go and doubles_tts.go instantiate it under
// the double's public name. The relay sessions themselves
// (relaySTTSession, relayTTSSession) stay one per kind: a session wrapper
// must embed the kind's session interface to pass its other methods
// through, and Go does not embed a type parameter.

// connector is the shape providers.STT and providers.TTS share: a
// provider whose sessions are S (providers.STTSession,
// providers.TTSSession).
type connector[S any] interface {
	Connect(ctx context.Context) (S, error)
	Warm(ctx context.Context) error
}

// sessionKind is what a generic double needs to know of a kind: how to
// pass a session's events through a relay, and the error an event
// carries (read and replaced).
type sessionKind[S, E any] struct {
	relay   func(S, relayStep[E]) S
	errOf   func(E) error
	withErr func(E, error) E
}

// wrapSessions is p with every session it connects passed through wrap.
type wrapSessions[S any] struct {
	connector[S]
	wrap func(S) S
}

func (w *wrapSessions[S]) Connect(ctx context.Context) (S, error) {
	s, err := w.connector.Connect(ctx)
	if err != nil {
		var none S
		return none, err
	}
	return w.wrap(s), nil
}

// misMappedConnector turns a refusal with status 429 into a
// *providers.Protocol, from Connect and in the events.
type misMappedConnector[S, E any] struct {
	connector[S]
	kind sessionKind[S, E]
}

func (m *misMappedConnector[S, E]) Connect(ctx context.Context) (S, error) {
	s, err := m.connector.Connect(ctx)
	if err != nil {
		var none S
		return none, mismap(err)
	}
	return m.kind.relay(s, func(ev E, emit func(E) bool) bool {
		return emit(m.kind.withErr(ev, mismap(m.kind.errOf(ev))))
	}), nil
}

// warmReplacedConnector is p with its Warm replaced by warm.
type warmReplacedConnector[S any] struct {
	connector[S]
	warm func(context.Context) error
}

func (w *warmReplacedConnector[S]) Warm(ctx context.Context) error { return w.warm(ctx) }

// warmSlowsConnector makes the first Connect after a Warm WarmSlowdown
// slower.
type warmSlowsConnector[S any] struct {
	connector[S]
	slow warmSlowdown
}

func (w *warmSlowsConnector[S]) Warm(ctx context.Context) error {
	w.slow.warmed()
	return w.connector.Warm(ctx)
}

func (w *warmSlowsConnector[S]) Connect(ctx context.Context) (S, error) {
	if err := w.slow.wait(ctx); err != nil {
		var none S
		return none, err
	}
	return w.connector.Connect(ctx)
}

// staleConnector hands out a dead session again: after a session failed
// with *providers.Disconnected, the next Connect returns that session
// instead of a new one.
type staleConnector[S, E any] struct {
	connector[S]
	kind    sessionKind[S, E]
	mu      sync.Mutex
	dropped S // the dead session, until a Connect takes it
}

func (s *staleConnector[S, E]) Connect(ctx context.Context) (S, error) {
	var none S
	s.mu.Lock()
	if d := s.dropped; any(d) != nil {
		s.dropped = none
		s.mu.Unlock()
		return d, nil
	}
	s.mu.Unlock()
	inner, err := s.connector.Connect(ctx)
	if err != nil {
		return none, err
	}
	var self S // set under s.mu once the relay exists
	rs := s.kind.relay(inner, func(ev E, emit func(E) bool) bool {
		var disc *providers.Disconnected
		if errors.As(s.kind.errOf(ev), &disc) {
			s.mu.Lock()
			s.dropped = self
			s.mu.Unlock()
		}
		return emit(ev)
	})
	s.mu.Lock()
	self = rs
	s.mu.Unlock()
	return rs, nil
}
