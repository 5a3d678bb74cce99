package contracttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The broken doubles: wrappers that break one behaviour of a provider (or
// of a harness) each, so that tests can prove the check aimed at it fails.
// They are exported for the tests of other packages' harnesses.

// Linger is how long Leaky's goroutines and KeepAlive's drains live: longer
// than the suite, so goroutines of earlier checks cannot exit inside the
// leak check's window and mask a new one.
const Linger = time.Hour

// WarmSlowdown is how much slower WarmSlows makes the stream after Warm.
const WarmSlowdown = 200 * time.Millisecond

// lingerers are the goroutines a double leaves behind on purpose: each
// lives for Linger or until Release, which the test that owns the double
// calls at its end (a synctest bubble must end with no goroutine left).
type lingerers struct {
	wg       sync.WaitGroup
	released context.Context
	release  context.CancelFunc
}

func newLingerers() *lingerers {
	ctx, cancel := context.WithCancel(context.Background())
	return &lingerers{released: ctx, release: cancel}
}

// Release ends the lingering goroutines and waits for them.
func (l *lingerers) Release() {
	l.release()
	l.wg.Wait()
}

// leave starts a goroutine that lingers for Linger or until Release.
func (l *lingerers) leave() {
	l.wg.Go(func() {
		t := time.NewTimer(Linger)
		defer t.Stop()
		select {
		case <-t.C:
		case <-l.released.Done():
		}
	})
}

// LeakyLLM leaves a goroutine behind for every stream, alive for Linger or
// until Release.
type LeakyLLM struct {
	providers.LLM
	*lingerers
}

// Leaky wraps p into a LeakyLLM.
func Leaky(p providers.LLM) *LeakyLLM { return &LeakyLLM{LLM: p, lingerers: newLingerers()} }

// Stream leaves a goroutine behind and streams from p.
func (l *LeakyLLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	l.leave()
	return l.LLM.Stream(ctx, req)
}

// CloseOnlyLLM keeps a goroutine per stream that only Close stops (for up
// to Linger, or until Release): the cancellation of the stream's context,
// which is all an abandoned stream gets, leaves it running. A finished
// stream, closed, leaks nothing; only the abandoned half of the leak check
// can see it.
type CloseOnlyLLM struct {
	providers.LLM
	*lingerers
}

// CloseOnly wraps p into a CloseOnlyLLM.
func CloseOnly(p providers.LLM) *CloseOnlyLLM {
	return &CloseOnlyLLM{LLM: p, lingerers: newLingerers()}
}

// Stream streams from p, with a watcher that waits for Close only.
func (c *CloseOnlyLLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	s, err := c.LLM.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	cs := &closeOnlyStream{LLMStream: s, closed: make(chan struct{})}
	c.wg.Go(func() {
		t := time.NewTimer(Linger)
		defer t.Stop()
		select {
		case <-cs.closed:
		case <-t.C:
		case <-c.released.Done():
		}
	})
	return cs, nil
}

type closeOnlyStream struct {
	providers.LLMStream
	closed chan struct{}
	once   sync.Once
}

// Close ends the watcher, then the stream.
func (s *closeOnlyStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return s.LLMStream.Close()
}

// MisMapped turns a refusal with status 429 into a *providers.Protocol,
// from Stream and from Recv.
func MisMapped(p providers.LLM) providers.LLM { return &misMapped{p} }

type misMapped struct{ providers.LLM }

func mismap(err error) error {
	var rej *providers.Rejected
	if errors.As(err, &rej) && rej.Status == 429 {
		return &providers.Protocol{Detail: "unexpected status"}
	}
	return err
}

func (m *misMapped) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	s, err := m.LLM.Stream(ctx, req)
	if err != nil {
		return nil, mismap(err)
	}
	return &misMappedStream{s}, nil
}

type misMappedStream struct{ providers.LLMStream }

func (s *misMappedStream) Recv() (providers.LLMEvent, error) {
	ev, err := s.LLMStream.Recv()
	return ev, mismap(err)
}

// WarmFails fails every Warm.
func WarmFails(p providers.LLM) providers.LLM { return &warmReplacedLLM{p, warmFailing} }

// WarmHangs never returns from Warm until its context ends.
func WarmHangs(p providers.LLM) providers.LLM { return &warmReplacedLLM{p, warmHanging} }

// warmReplacedLLM is p with its Warm replaced by warm.
type warmReplacedLLM struct {
	providers.LLM
	warm func(context.Context) error
}

func (w *warmReplacedLLM) Warm(ctx context.Context) error { return w.warm(ctx) }

// warmFailing is the Warm of the WarmFails doubles.
func warmFailing(context.Context) error { return fmt.Errorf("%w: warm fails", ErrBroken) }

// warmHanging is the Warm of the WarmHangs doubles: it returns when ctx
// ends.
func warmHanging(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// WarmSlows makes the first stream after a Warm WarmSlowdown slower to
// connect, as a warm-up that blocks the connection it should prepare.
func WarmSlows(p providers.LLM) providers.LLM { return &warmSlows{LLM: p} }

type warmSlows struct {
	providers.LLM
	slow warmSlowdown
}

func (w *warmSlows) Warm(ctx context.Context) error {
	w.slow.warmed()
	return w.LLM.Warm(ctx)
}

func (w *warmSlows) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	if err := w.slow.wait(ctx); err != nil {
		return nil, err
	}
	return w.LLM.Stream(ctx, req)
}

// warmSlowdown is the state of the WarmSlows doubles: the connect after a
// Warm waits WarmSlowdown first.
type warmSlowdown struct {
	mu   sync.Mutex
	slow bool
}

func (w *warmSlowdown) warmed() {
	w.mu.Lock()
	w.slow = true
	w.mu.Unlock()
}

func (w *warmSlowdown) wait(ctx context.Context) error {
	w.mu.Lock()
	slow := w.slow
	w.slow = false
	w.mu.Unlock()
	if !slow {
		return nil
	}
	t := time.NewTimer(WarmSlowdown)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ConnectHangs enforces d's first-event and idle deadlines but none for
// the connect: a stalled connect is waited out.
func ConnectHangs(p providers.LLM, d time.Duration) (providers.LLM, error) {
	return WithDeadlines(p, Deadlines{FirstEvent: d, Idle: d})
}

// NoIdleTimeout enforces d for the connect and the first event only: a
// stall after the first event is waited out.
func NoIdleTimeout(p providers.LLM, d time.Duration) (providers.LLM, error) {
	return WithDeadlines(p, Deadlines{Connect: d, FirstEvent: d})
}

// StaleSession replays a dropped stream: when a stream failed with
// *providers.Disconnected, a retry of the same request (same messages) gets
// that dead stream back instead of a new one, as an adapter that caches a
// session per request and does not notice it died.
func StaleSession(p providers.LLM) providers.LLM { return &staleSession{LLM: p} }

type staleSession struct {
	providers.LLM
	mu      sync.Mutex
	key     string
	dropped providers.LLMStream
}

func requestKey(req *providers.Request) string {
	if req == nil {
		return ""
	}
	var b strings.Builder
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "%s\x00%s\x00", m.Role, m.Text)
	}
	return b.String()
}

func (s *staleSession) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	key := requestKey(req)
	s.mu.Lock()
	if s.dropped != nil && s.key == key {
		st := s.dropped
		s.dropped = nil
		s.mu.Unlock()
		return st, nil
	}
	s.mu.Unlock()
	st, err := s.LLM.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &staleStream{LLMStream: st, owner: s, key: key}, nil
}

type staleStream struct {
	providers.LLMStream
	owner *staleSession
	key   string
}

func (s *staleStream) Recv() (providers.LLMEvent, error) {
	ev, err := s.LLMStream.Recv()
	var disc *providers.Disconnected
	if errors.As(err, &disc) {
		s.owner.mu.Lock()
		s.owner.key, s.owner.dropped = s.key, s
		s.owner.mu.Unlock()
	}
	return ev, err
}

// LosesFirstDelta drops the first text delta of every stream.
func LosesFirstDelta(p providers.LLM) providers.LLM { return &losesFirst{p} }

type losesFirst struct{ providers.LLM }

func (l *losesFirst) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	s, err := l.LLM.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &losesFirstStream{LLMStream: s}, nil
}

type losesFirstStream struct {
	providers.LLMStream
	lost bool
}

func (s *losesFirstStream) Recv() (providers.LLMEvent, error) {
	ev, err := s.LLMStream.Recv()
	if err == nil && ev.Kind == providers.LLMText && !s.lost {
		s.lost = true
		return s.LLMStream.Recv()
	}
	return ev, err
}

// KeepAliveLLM keeps pulling a response after the caller dropped it: Close
// and the cancellation of the stream's context end the caller's view at
// once, but a goroutine goes on reading the response from p, and then
// waits on, for up to Linger or until Release (a keep-alive reader that
// outlives its streams). A cancellation during the connect still reaches
// p.
type KeepAliveLLM struct {
	providers.LLM
	*lingerers
}

// KeepAlive wraps p into a KeepAliveLLM.
func KeepAlive(p providers.LLM) *KeepAliveLLM {
	return &KeepAliveLLM{LLM: p, lingerers: newLingerers()}
}

type recvResult struct {
	ev  providers.LLMEvent
	err error
}

// Stream streams from p through a reader goroutine that ignores the drop.
func (k *KeepAliveLLM) Stream(ctx context.Context, req *providers.Request) (providers.LLMStream, error) {
	inner, innerCancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, innerCancel)
	s, err := k.LLM.Stream(inner, req)
	stop()
	if err != nil {
		innerCancel()
		return nil, err
	}
	ks := &keepAliveStream{ctx: ctx, out: make(chan recvResult), closed: make(chan struct{}), ended: make(chan struct{})}
	k.wg.Go(func() { ks.pump(s, innerCancel, k.released) })
	return ks, nil
}

type keepAliveStream struct {
	ctx    context.Context
	out    chan recvResult
	closed chan struct{}
	once   sync.Once
	ended  chan struct{} // closed by the pump when the response ended
	endErr error         // set before ended is closed
}

// pump reads s to its end (or Linger after the drop), handing events to
// the caller while the caller is there and dropping them afterwards.
func (s *keepAliveStream) pump(inner providers.LLMStream, cancel context.CancelFunc, released context.Context) {
	defer cancel()
	defer context.AfterFunc(released, cancel)()
	var endErr error
	ended := false
	end := func() {
		if !ended {
			ended = true
			s.endErr = endErr
			close(s.ended)
		}
	}
	defer end()
	linger := time.AfterFunc(Linger, cancel)
	defer linger.Stop()
	dropped := false
	for {
		ev, err := inner.Recv()
		if !dropped {
			select {
			case s.out <- recvResult{ev, err}:
			case <-s.closed:
				dropped = true
			case <-s.ctx.Done():
				dropped = true
			}
		}
		if err != nil {
			endErr = err
			end() // the caller sees the end now; the reader stays
			// The reader does not return with the response: it waits on
			// its connection (a keep-alive reader), so the leak shows in
			// every stream, read to its end or dropped. (When it waited
			// only after a drop, the double passed the leak check in two
			// CI runs of the whole suite, never in 200 runs here; the race
			// was not found, and this takes it out of the question.)
			wait := time.NewTimer(Linger)
			defer wait.Stop()
			select {
			case <-released.Done():
			case <-wait.C:
			}
			return
		}
	}
}

func (s *keepAliveStream) Recv() (providers.LLMEvent, error) {
	select {
	case <-s.closed:
		return providers.LLMEvent{}, providers.ErrClosed
	default:
	}
	select {
	case r := <-s.out:
		return r.ev, r.err
	case <-s.ended:
		return providers.LLMEvent{}, s.endErr
	case <-s.closed:
		return providers.LLMEvent{}, providers.ErrClosed
	case <-s.ctx.Done():
		return providers.LLMEvent{}, s.ctx.Err()
	}
}

func (s *keepAliveStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// FrozenCounter is h with an events-sent counter that never advances.
func FrozenCounter(h LLMHarness) LLMHarness { return &frozenCounter{LLMHarness: h, n: h.EventsSent()} }

type frozenCounter struct {
	LLMHarness
	n int
}

func (f *frozenCounter) EventsSent() int { return f.n }
