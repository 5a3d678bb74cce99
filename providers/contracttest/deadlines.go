package contracttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// Deadlines are the io deadlines an LLM adapter enforces; zero means none.
type Deadlines struct {
	// Connect bounds Stream (and Warm) from its call to its return.
	Connect time.Duration
	// FirstEvent bounds the first Recv of a stream.
	FirstEvent time.Duration
	// Idle bounds every later Recv: the gap after the previous event.
	Idle time.Duration
}

// Uniform is d for the connect, the first event and every idle gap: what
// an adapter configured with an io timeout of d enforces.
func Uniform(d time.Duration) Deadlines { return Deadlines{Connect: d, FirstEvent: d, Idle: d} }

// Validate rejects negative deadlines.
func (d Deadlines) Validate() error {
	if d.Connect < 0 || d.FirstEvent < 0 || d.Idle < 0 {
		return fmt.Errorf("%w: deadlines %+v", ErrInvalidConfig, d)
	}
	return nil
}

// WithDeadlines wraps p so that it enforces d as an adapter does, and is the
// reference behaviour for the timeout checks: a Stream that has not
// returned after d.Connect, and a Recv that has not returned after
// d.FirstEvent (the first) or d.Idle (later ones), fail with
// *providers.Timeout; the stream's context is cancelled then, so p stops
// the response. Every timer starts when the call starts. It starts no
// goroutine of its own (time.AfterFunc timers only).
func WithDeadlines(p providers.LLM, d Deadlines) (providers.LLM, error) {
	if err := checkArgs(p == nil, "provider", d); err != nil {
		return nil, err
	}
	return &deadlineLLM{p: p, d: d}, nil
}

type deadlineLLM struct {
	p providers.LLM
	d Deadlines
}

var _ providers.LLM = (*deadlineLLM)(nil)

// Warm calls p's Warm within the connect deadline.
func (l *deadlineLLM) Warm(ctx context.Context) error {
	if l.d.Connect <= 0 {
		return l.p.Warm(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, l.d.Connect)
	defer cancel()
	err := l.p.Warm(wctx)
	if err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return &providers.Timeout{Op: "warm"}
	}
	return err
}

// Stream calls p's Stream within the connect deadline.
func (l *deadlineLLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	sctx, cancel := context.WithCancel(ctx)
	var t *time.Timer
	if l.d.Connect > 0 {
		t = time.AfterFunc(l.d.Connect, cancel)
	}
	s, err := l.p.Stream(sctx, req)
	if t != nil && !t.Stop() && ctx.Err() == nil {
		if s != nil {
			_ = s.Close()
		}
		cancel()
		return nil, &providers.Timeout{Op: "connect"}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &deadlineStream{s: s, cancel: cancel, ctx: ctx, d: l.d}, nil
}

// deadlineStream is a stream of deadlineLLM. Recv is not for concurrent
// use, as for any LLMStream.
type deadlineStream struct {
	s      providers.LLMStream
	cancel context.CancelFunc
	ctx    context.Context // the caller's
	d      Deadlines

	mu     sync.Mutex
	recvd  bool  // an event was read: the idle deadline applies
	failed error // the Timeout, returned by every later Recv
}

var _ providers.LLMStream = (*deadlineStream)(nil)

// Recv calls p's Recv within the first-event or the idle deadline.
func (s *deadlineStream) Recv() (providers.LLMEvent, error) {
	s.mu.Lock()
	failed, limit, op := s.failed, s.d.FirstEvent, "first event"
	if s.recvd {
		limit, op = s.d.Idle, "idle"
	}
	s.mu.Unlock()
	if failed != nil {
		return providers.LLMEvent{}, failed
	}
	var t *time.Timer
	if limit > 0 {
		t = time.AfterFunc(limit, s.cancel)
	}
	ev, err := s.s.Recv()
	if t != nil && !t.Stop() && s.ctx.Err() == nil {
		_ = s.s.Close()
		tErr := &providers.Timeout{Op: op}
		s.mu.Lock()
		s.failed = tErr
		s.mu.Unlock()
		return providers.LLMEvent{}, tErr
	}
	if err == nil {
		s.mu.Lock()
		s.recvd = true
		s.mu.Unlock()
	}
	return ev, err
}

// Close closes p's stream and cancels its context.
func (s *deadlineStream) Close() error {
	err := s.s.Close()
	s.cancel()
	return err
}
