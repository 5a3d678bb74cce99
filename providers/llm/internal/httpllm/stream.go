package httpllm

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

// Decoder is a vendor's reading of one response's events. One per
// stream; Recv calls it from one goroutine.
type Decoder interface {
	// Decode appends to events the events of one SSE event's data (valid
	// only during the call) and returns the slice; done reports the
	// vendor's end of response (the rest of the body is then drained,
	// bounded, so the connection is reused). An error is the stream's
	// error (a *providers.Protocol, a *providers.Rejected, ...).
	Decode(data []byte, events []providers.LLMEvent) (_ []providers.LLMEvent, done bool, err error)
	// End is called at the body's clean end before Decode reported done:
	// it appends the response's last events when the body's end is the
	// response's end, else returns the error of the cut stream (Cut).
	End(events []providers.LLMEvent) ([]providers.LLMEvent, error)
	// StopReason is the StopReason of LLMDone, asked once done.
	StopReason() string
}

// The phases of a stream's one deadline timer.
const (
	phaseHeaders int32 = iota
	phaseFirst
	phaseIdle
)

// maxDrain bounds what is read after the end of response so the
// connection can go back to the pool.
const maxDrain = 4 << 10

// Stream is one response; it implements providers.LLMStream. The zero
// Stream is readied by Client.Open or Over. Recv is for one goroutine;
// Close may be called from any, more than once.
type Stream struct {
	parent context.Context // the caller's
	ctx    context.Context // the request's, cancelled with a cause
	cancel context.CancelCauseFunc
	timer  *time.Timer
	phase  atomic.Int32
	idle   time.Duration
	cut    string // StreamConfig.CutDetail

	body   io.ReadCloser
	sse    *wire.SSEReader
	dec    Decoder
	events []providers.LLMEvent // of the last event's data
	head   int                  // next of events to return
	done   bool
	err    error // returned by every Recv once set
	closed atomic.Bool
	once   sync.Once
}

var _ providers.LLMStream = (*Stream)(nil)

// begin starts the request's context and the response-headers deadline.
func (s *Stream) begin(parent context.Context, dec Decoder, cfg *StreamConfig) {
	s.parent, s.dec, s.idle, s.cut = parent, dec, cfg.IdleTimeout, cfg.CutDetail
	s.ctx, s.cancel = context.WithCancelCause(parent)
	s.phase.Store(phaseHeaders)
	s.timer = time.AfterFunc(cfg.ConnectTimeout, s.expire)
}

// attach gives the stream its body and arms the first-event deadline.
func (s *Stream) attach(body io.ReadCloser, cfg *StreamConfig) {
	s.body = body
	s.sse = wire.NewSSEReader(body, cfg.MaxLineBytes)
	s.arm(phaseFirst, cfg.FirstEventTimeout)
}

// Over readies s to read a body already at hand (an in-memory one, in a
// test) as Open does a response's: the first-event and idle deadlines
// run from here; ConnectTimeout is not used.
func (s *Stream) Over(parent context.Context, body io.ReadCloser, dec Decoder, cfg StreamConfig) {
	cfg.ConnectTimeout = cfg.FirstEventTimeout
	s.begin(parent, dec, &cfg)
	s.attach(body, &cfg)
}

// expire runs on the timer's goroutine: it cancels the request with the
// phase's Timeout, which unblocks any read at once.
func (s *Stream) expire() {
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
func (s *Stream) arm(phase int32, d time.Duration) {
	s.phase.Store(phase)
	s.timer.Reset(d)
}

// Recv returns the next event: the decoder's events, then LLMDone, then
// io.EOF. Once an error is returned, every later call returns it.
// Cancelling the caller's context stops it at once with the context's
// error.
func (s *Stream) Recv() (providers.LLMEvent, error) {
	if s.closed.Load() {
		return providers.LLMEvent{}, fmt.Errorf("%w: Recv after Close", providers.ErrClosed)
	}
	if s.err == nil {
		if err := s.parent.Err(); err != nil {
			s.fail(ctxErr(s.parent))
		}
	}
	for {
		if s.head < len(s.events) {
			ev := s.events[s.head]
			s.head++
			return ev, nil
		}
		if s.err != nil {
			return providers.LLMEvent{}, s.err
		}
		if s.done {
			s.err = io.EOF
			return providers.LLMEvent{Kind: providers.LLMDone, StopReason: s.dec.StopReason()}, nil
		}
		data, err := s.sse.Next()
		s.events, s.head = s.events[:0], 0
		if err != nil {
			s.ended(err)
			continue
		}
		s.arm(phaseIdle, s.idle)
		var done bool
		s.events, done, err = s.dec.Decode(data, s.events)
		if err != nil {
			s.events = s.events[:0]
			s.fail(err)
			continue
		}
		if done {
			s.done = true
			s.finishBody()
		}
	}
}

// ended handles the end of the body, clean or not: a clean end that
// neither the caller nor the stream caused goes to the decoder's End;
// anything else is mapped.
func (s *Stream) ended(err error) {
	if !errors.Is(err, io.EOF) || s.parent.Err() != nil || context.Cause(s.ctx) != nil {
		s.fail(bodyErr(s.parent, s.ctx, err, s.cut))
		return
	}
	s.events, err = s.dec.End(s.events)
	if err != nil {
		s.events = s.events[:0]
		s.fail(err)
		return
	}
	s.done = true
	s.release()
}

// fail records the stream's error and releases the response.
func (s *Stream) fail(err error) {
	s.err = err
	s.release()
}

// finishBody reads the little that follows the end of response (the end
// of the chunked body), bounded by the idle deadline, so the keep-alive
// connection goes back to the pool; then releases the response.
func (s *Stream) finishBody() {
	_, _ = io.CopyN(io.Discard, s.body, maxDrain)
	s.release()
}

// release stops the timer and the request and closes the body, once.
func (s *Stream) release() {
	s.once.Do(func() {
		s.timer.Stop()
		s.cancel(fmt.Errorf("%w: response released", providers.ErrClosed))
		_ = s.body.Close()
	})
}

// Close releases the response; a Recv blocked on another goroutine returns
// at once. Safe to call more than once.
func (s *Stream) Close() error {
	s.closed.Store(true)
	s.release()
	return nil
}
