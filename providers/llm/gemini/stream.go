package gemini

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/wire"
)

// The phases of a stream's one deadline timer.
const (
	phaseHeaders int32 = iota
	phaseFirst
	phaseIdle
)

// stream is one response. Recv is for one goroutine; Close may be called
// from any, more than once.
type stream struct {
	parent context.Context // the caller's
	ctx    context.Context // the request's, cancelled with a cause
	cancel context.CancelCauseFunc
	timer  *time.Timer
	phase  atomic.Int32
	idle   time.Duration

	body   io.ReadCloser
	sse    *wire.SSEReader
	dec    decoder
	head   int // next event of dec.events to return
	done   bool
	err    error // returned by every Recv once set
	closed atomic.Bool
	once   sync.Once
}

var _ providers.LLMStream = (*stream)(nil)

// expire runs on the timer's goroutine: it cancels the request with the
// phase's Timeout, which unblocks any read at once.
func (s *stream) expire() {
	op := "event gap"
	switch s.phase.Load() {
	case phaseHeaders:
		op = "response headers"
	case phaseFirst:
		op = "first event"
	}
	s.cancel(&providers.Timeout{Op: op})
}

// arm sets the deadline of the next phase.
func (s *stream) arm(phase int32, d time.Duration) {
	s.phase.Store(phase)
	s.timer.Reset(d)
}

// Recv returns the next event: text, whole calls, then (at the end of the
// body) usage and the text parts' thought signatures as provider data,
// then LLMDone, then io.EOF. Once an error is returned, every later call
// returns it. Cancelling the caller's context stops it at once with the
// context's error.
func (s *stream) Recv() (providers.LLMEvent, error) {
	if s.closed.Load() {
		return providers.LLMEvent{}, fmt.Errorf("%w: Recv after Close", providers.ErrClosed)
	}
	if s.err == nil {
		if err := s.parent.Err(); err != nil {
			s.fail(ctxErr(s.parent))
		}
	}
	for {
		if s.head < len(s.dec.events) {
			ev := s.dec.events[s.head]
			s.head++
			return ev, nil
		}
		if s.err != nil {
			return providers.LLMEvent{}, s.err
		}
		if s.done {
			s.err = io.EOF
			// finishReason "MAX_TOKENS" is providers.StopLength.
			return providers.LLMEvent{Kind: providers.LLMDone, StopReason: s.dec.stop}, nil
		}
		data, err := s.sse.Next()
		s.dec.events, s.head = s.dec.events[:0], 0
		if errors.Is(err, io.EOF) && s.parent.Err() == nil && context.Cause(s.ctx) == nil {
			// The body's clean end is the response's end (there is no
			// [DONE]): complete only when a finishReason came.
			if !s.dec.finished {
				s.fail(&providers.Disconnected{Cause: fmt.Errorf("stream ended before a finishReason: %w", io.ErrUnexpectedEOF)})
				continue
			}
			s.dec.finish()
			s.done = true
			s.release()
			continue
		}
		if err != nil {
			s.fail(s.readErr(err))
			continue
		}
		s.arm(phaseIdle, s.idle)
		if err := s.dec.decode(data); err != nil {
			s.dec.events = s.dec.events[:0]
			s.fail(err)
			continue
		}
	}
}

// fail records the stream's error and releases the response.
func (s *stream) fail(err error) {
	s.err = err
	s.release()
}

// readErr maps a failed read of the body.
func (s *stream) readErr(err error) error {
	var p *providers.Protocol
	if errors.As(err, &p) {
		return err
	}
	return mapTransportErr(s.parent, s.ctx, err, true)
}

// mapTransportErr maps an error of the request or its body: the caller's
// cancellation first, then the stream's own deadline, then a closed
// stream; anything else is a lost connection (for the body, an end before
// a finishReason too).
func mapTransportErr(parent, ctx context.Context, err error, body bool) error {
	if parent.Err() != nil {
		return ctxErr(parent)
	}
	var t *providers.Timeout
	if cause := context.Cause(ctx); errors.As(cause, &t) {
		return t
	} else if errors.Is(cause, providers.ErrClosed) {
		return cause
	}
	if body {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		err = fmt.Errorf("stream cut: %w", err)
	}
	return &providers.Disconnected{Cause: err}
}

// ctxErr is the error of a done caller context: a deadline is a Timeout
// (still matching context.DeadlineExceeded), a cancellation is the
// context's error as it is.
func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", &providers.Timeout{Op: "caller's deadline"}, err)
	}
	return err
}

// release stops the timer and the request and closes the body, once.
func (s *stream) release() {
	s.once.Do(func() {
		s.timer.Stop()
		s.cancel(fmt.Errorf("%w: response released", providers.ErrClosed))
		_ = s.body.Close()
	})
}

// Close releases the response; a Recv blocked on another goroutine returns
// at once. Safe to call more than once.
func (s *stream) Close() error {
	s.closed.Store(true)
	s.release()
	return nil
}
