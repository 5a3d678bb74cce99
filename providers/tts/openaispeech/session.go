package openaispeech

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/ttspump"
)

// Bounds of a session's bookkeeping.
const (
	// maxPendingAcks bounds the cancels waiting for their Cancelled event.
	maxPendingAcks = 64
	// maxFinishedIDs is how many flushed or cancelled context ids the
	// session remembers to refuse Push and Flush to them.
	maxFinishedIDs = 256
)

// errCancelled is the cause of a request that Cancel ended.
var errCancelled = errors.New("openaispeech: context cancelled")

// ttsContext is one context of a session: its text not yet requested.
// Guarded by the session's mu.
type ttsContext struct {
	id      string
	queued  string
	flushed bool
	// cancelled is set when Cancel removes the context: audio of a
	// request in flight for it is dropped.
	cancelled bool
}

// session is a speech session. One goroutine (run) makes the requests
// and reads their bodies; their events reach the caller through the pump.
// Push, Flush and Cancel change the state under mu and wake run, never
// blocking. Cancel also ends the request in flight at once through its
// context, and queues its ack ahead of the audio waiting for the caller.
type session struct {
	a    *Adapter
	pump *ttspump.Pump
	wake chan struct{}
	ctx  context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup

	// Owned by run.
	buf []byte
	dec decoder
	req requestState

	mu sync.Mutex // guards the pump's queue and the contexts too
	// contexts are the open contexts in order of opening (the head is
	// being spoken) and the finished ids.
	contexts *ttspump.Contexts[ttsContext]
	// inFlight is the context of the request in flight, cancelReq ends
	// that request.
	inFlight  *ttsContext
	cancelReq context.CancelCauseFunc
	err       error
	closed    bool
}

var _ providers.TTSSession = (*session)(nil)

// newSession starts a session's worker and its pump, which the end of
// the session's context (Close, or the caller's) stops at once. Events is
// unbuffered, as the body is read one event ahead of the caller.
func newSession(parent context.Context, a *Adapter) *session {
	ctx, stop := context.WithCancelCause(parent)
	s := &session{
		a:        a,
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		stop:     stop,
		buf:      make([]byte, a.cfg.ReadBytes),
		contexts: ttspump.NewContexts[ttsContext](maxFinishedIDs),
	}
	s.pump = ttspump.New(&s.mu, 0)
	s.req.init(a)
	s.pump.Start()
	context.AfterFunc(ctx, s.pump.Stop)
	s.wg.Add(1)
	go s.run()
	return s
}

// poke wakes run without blocking.
func (s *session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// usableLocked returns why the session takes no more requests, if it
// does not.
func (s *session) usableLocked() error {
	if s.closed {
		return providers.ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if s.ctx.Err() != nil {
		return providers.ErrClosed
	}
	return nil
}

// contextLocked returns the open context id, opening it if needed.
func (s *session) contextLocked(id string) (*ttsContext, error) {
	if id == "" {
		return nil, ErrEmptyContextID
	}
	if err := s.usableLocked(); err != nil {
		return nil, err
	}
	if s.contexts.Finished(id) {
		return nil, fmt.Errorf("%w: %q", ErrContextClosed, id)
	}
	if c := s.contexts.Get(id); c != nil {
		return c, nil
	}
	if n := s.contexts.Len(); n >= s.a.cfg.MaxOpenContexts {
		return nil, fmt.Errorf("%w: %d", ErrTooManyContexts, n)
	}
	c := &ttsContext{id: id}
	s.contexts.Open(id, c)
	return c, nil
}

// Push queues text for the context, opening it on first use. The text is
// requested as soon as no other request of the session is in flight;
// pieces queued meanwhile are joined, as they are, into the next request.
func (s *session) Push(contextID, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.contextLocked(contextID)
	if err != nil {
		return err
	}
	if len(c.queued)+len(text) > s.a.cfg.MaxQueuedBytes {
		return fmt.Errorf("%w: %d bytes queued, %d pushed, limit %d", ErrTextTooLong, len(c.queued), len(text), s.a.cfg.MaxQueuedBytes)
	}
	c.queued += text
	s.poke()
	return nil
}

// Flush marks the context complete; Flushed follows its last audio.
// Flushing a context never pushed to opens it empty.
func (s *session) Flush(contextID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.contextLocked(contextID)
	if err != nil {
		return err
	}
	c.flushed = true
	s.contexts.Finish(contextID)
	s.poke()
	return nil
}

// Cancel drops the context's queued text, ends its request in flight
// (before or after the headers) and queues its Cancelled event ahead of
// the next audio. Any id is acknowledged, even one unknown or finished.
func (s *session) Cancel(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	acks, acked := s.pump.AcksLocked(contextID)
	if !acked && acks >= maxPendingAcks {
		return fmt.Errorf("%w: %d", ErrCancelBacklog, acks)
	}
	if c := s.contexts.Close(contextID); c != nil {
		c.cancelled = true
		c.queued = ""
		if s.inFlight == c {
			s.cancelReq(errCancelled)
		}
	}
	s.contexts.Finish(contextID)
	s.pump.RetractLocked(contextID)
	if !acked {
		s.pump.QueueAheadLocked(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: contextID})
	}
	s.poke()
	return nil
}

// Events delivers the session's events; it is closed when the session
// ends.
func (s *session) Events() <-chan providers.TTSEvent { return s.pump.Events() }

// Close ends the session: the request in flight is cancelled, the worker
// stopped and waited for, Events closed. Safe to call more than once.
func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop(providers.ErrClosed)
	s.wg.Wait()
	s.pump.Wait()
	return nil
}

// nextLocked picks the next request: the head context's queued text;
// a head context flushed with nothing left queues its Flushed and makes
// way for the next. ok is false when there is nothing to request.
func (s *session) nextLocked() (c *ttsContext, input string, ok bool) {
	for c := s.contexts.Head(); c != nil; c = s.contexts.Head() {
		if strings.TrimSpace(c.queued) != "" {
			input, c.queued = takeInput(c.queued, s.a.cfg.MaxInputRunes)
			return c, input, true
		}
		c.queued = ""
		if !c.flushed {
			return nil, "", false
		}
		s.contexts.Close(c.id)
		s.pump.QueueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: c.id})
	}
	return nil, "", false
}

// run is the worker: it makes one request at a time and sleeps when
// there is none. A failed request ends the session: its Error event is
// delivered next, then Events closes.
func (s *session) run() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		c, input, ok := s.nextLocked()
		s.mu.Unlock()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-s.ctx.Done():
				return
			}
		}
		if err := s.speak(c, input); err != nil {
			if s.ctx.Err() != nil {
				return // closed or dropped: Events just closes
			}
			s.mu.Lock()
			s.err = err
			s.pump.FailLocked(err, c.id)
			s.mu.Unlock()
			return
		}
	}
}

// send queues ev of context c (dropped when c was cancelled meanwhile)
// and waits until the pump has taken it, so the body is read at the
// caller's pace, one event ahead. It is false when the session ended
// first.
func (s *session) send(ev providers.TTSEvent, c *ttsContext) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.cancelled {
		s.pump.QueueLocked(ev)
	}
	for s.pump.PendingLocked() > 0 {
		s.mu.Unlock()
		select {
		case <-s.pump.Space():
			s.mu.Lock()
		case <-s.ctx.Done():
			s.mu.Lock()
			return false
		}
	}
	return true
}
