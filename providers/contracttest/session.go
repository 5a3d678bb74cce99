package contracttest

import (
	"context"
	"fmt"
	"io"
	"time"
)

// handle is a session (or an LLM stream) under test: what names it in
// failures, cancel ends its context, bound limits every call on it and
// every awaited event, n counts the events read (failures excluded).
type handle[S io.Closer] struct {
	what   string
	s      S
	cancel context.CancelFunc
	bound  time.Duration
	n      int
}

// openHandle opens a session with open (the provider's Connect or
// Stream, named call in failures; noun says what it returns) under a
// context of its own, bounded: a hang cancels that context, and a
// session that comes too late is closed.
func openHandle[S io.Closer](s *suite, call, noun, what string, open func(context.Context) (S, error)) (handle[S], error) {
	ctx, cancel := context.WithCancel(s.ctx)
	sess, err := callBounded(call+" ("+what+")", s.bound,
		func() (S, error) { return open(ctx) },
		cancel,
		func(sess S) {
			if any(sess) != nil { // (nil, nil) too late: nothing to close
				_ = sess.Close()
			}
		})
	if err != nil {
		cancel()
		return handle[S]{}, err
	}
	if any(sess) == nil {
		cancel()
		return handle[S]{}, fmt.Errorf("%s (%s) returned neither a %s nor an error", call, what, noun)
	}
	return handle[S]{what: what, s: sess, cancel: cancel, bound: s.bound}, nil
}

// call runs one method of the session (named method in failures),
// bounded: a hang closes the session.
func (h *handle[S]) call(method string, f func() error) error {
	_, err := callBounded(method+" ("+h.what+")", h.bound,
		func() (struct{}, error) { return struct{}{}, f() },
		func() { _ = h.s.Close() }, nil)
	return err
}

// hangUp calls Close, bounded, and leaves the context alone (unless
// Close hangs: then it is cancelled).
func (h *handle[S]) hangUp() error {
	_, err := callBounded("Close ("+h.what+")", h.bound,
		func() (struct{}, error) { return struct{}{}, h.s.Close() },
		h.cancel, nil)
	return err
}

// close calls Close (bounded) and cancels the session's context.
func (h *handle[S]) close() error {
	err := h.hangUp()
	h.cancel()
	return err
}

// eventSession is a session whose events come on a channel: an
// STTSession or a TTSSession.
type eventSession[E any] interface {
	Events() <-chan E
	Close() error
}

// recvEvent reads the next event of h's session within the bound.
// failure is the kind's reading of an event: the error it reports, nil
// for an event that reports none. A failure event is returned with its
// error; a closed channel is ErrEnded.
func recvEvent[E any, S eventSession[E]](h *handle[S], failure func(E) error) (E, error) {
	ev, ok, timedOut := recvWithin(h.s.Events(), h.bound)
	switch {
	case timedOut:
		return ev, fmt.Errorf("%w: event %d (%s) after %v", ErrHang, h.n, h.what, h.bound)
	case !ok:
		return ev, fmt.Errorf("%w after %d events (%s)", ErrEnded, h.n, h.what)
	}
	if err := failure(ev); err != nil {
		return ev, err
	}
	h.n++
	return ev, nil
}
