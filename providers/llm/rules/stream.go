package rules

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// stream is one response. Recv waits on a timer for each event's due
// time; no goroutine runs for it. Recv is for one goroutine; Close may be
// called from any, any number of times.
type stream struct {
	ctx    context.Context
	start  time.Time
	events []providers.LLMEvent
	due    []time.Duration
	next   int
	timer  *time.Timer

	closeOnce sync.Once
	closed    chan struct{}
}

var _ providers.LLMStream = (*stream)(nil)

func newStream(ctx context.Context, start time.Time, evs []providers.LLMEvent, due []time.Duration) *stream {
	return &stream{ctx: ctx, start: start, events: evs, due: due, closed: make(chan struct{})}
}

// Recv returns the next event at its due time, io.EOF after Done, the
// context's error once it is done, and an error wrapping
// providers.ErrClosed after Close.
func (s *stream) Recv() (providers.LLMEvent, error) {
	if err := s.stopped(); err != nil {
		return providers.LLMEvent{}, err
	}
	if s.next >= len(s.events) {
		return providers.LLMEvent{}, io.EOF
	}
	if wait := time.Until(s.start.Add(s.due[s.next])); wait > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(wait)
		} else {
			s.timer.Reset(wait)
		}
		select {
		case <-s.timer.C:
		case <-s.ctx.Done():
			s.timer.Stop()
			return providers.LLMEvent{}, s.ctx.Err()
		case <-s.closed:
			s.timer.Stop()
			return providers.LLMEvent{}, fmt.Errorf("%w: rules stream", providers.ErrClosed)
		}
	}
	ev := s.events[s.next]
	s.next++
	return ev, nil
}

// stopped is the error of a closed stream or a done context, else nil.
func (s *stream) stopped() error {
	select {
	case <-s.closed:
		return fmt.Errorf("%w: rules stream", providers.ErrClosed)
	default:
	}
	return s.ctx.Err()
}

// Close ends the stream; a Recv waiting returns at once.
func (s *stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}
