package openaispeech

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/brisvox/brisvox/providers"
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

// session is a speech session. One goroutine (run) makes the requests,
// reads their bodies and sends every event; Push, Flush and Cancel change
// the state under mu and wake it, never blocking. Cancel also ends the
// request in flight at once through its context.
type session struct {
	a    *Adapter
	out  chan providers.TTSEvent
	wake chan struct{}
	ctx  context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup

	// Owned by run.
	buf []byte
	dec decoder
	req requestState

	mu sync.Mutex
	// contexts are the open contexts in order of opening; contexts[0] is
	// being spoken. open finds them by id.
	contexts []*ttsContext
	open     map[string]*ttsContext
	finished map[string]struct{}
	finOrder []string
	acks     []string
	// inFlight is the context of the request in flight, cancelReq ends
	// that request.
	inFlight  *ttsContext
	cancelReq context.CancelCauseFunc
	err       error
	closed    bool
}

var _ providers.TTSSession = (*session)(nil)

// newSession starts a session's worker.
func newSession(parent context.Context, a *Adapter) *session {
	ctx, stop := context.WithCancelCause(parent)
	s := &session{
		a:        a,
		out:      make(chan providers.TTSEvent),
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		stop:     stop,
		buf:      make([]byte, a.cfg.ReadBytes),
		open:     map[string]*ttsContext{},
		finished: map[string]struct{}{},
	}
	s.req.init(a)
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
	if _, ok := s.finished[id]; ok {
		return nil, fmt.Errorf("%w: %q", ErrContextClosed, id)
	}
	if c := s.open[id]; c != nil {
		return c, nil
	}
	if len(s.open) >= s.a.cfg.MaxOpenContexts {
		return nil, fmt.Errorf("%w: %d", ErrTooManyContexts, len(s.open))
	}
	c := &ttsContext{id: id}
	s.open[id] = c
	s.contexts = append(s.contexts, c)
	return c, nil
}

// finishLocked remembers that id takes no more text.
func (s *session) finishLocked(id string) {
	if _, ok := s.finished[id]; ok {
		return
	}
	s.finished[id] = struct{}{}
	s.finOrder = append(s.finOrder, id)
	if len(s.finOrder) > maxFinishedIDs {
		delete(s.finished, s.finOrder[0])
		s.finOrder = slices.Delete(s.finOrder, 0, 1)
	}
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
	s.finishLocked(contextID)
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
	if !slices.Contains(s.acks, contextID) && len(s.acks) >= maxPendingAcks {
		return fmt.Errorf("%w: %d", ErrCancelBacklog, len(s.acks))
	}
	if c := s.open[contextID]; c != nil {
		c.cancelled = true
		c.queued = ""
		s.contexts = slices.DeleteFunc(s.contexts, func(o *ttsContext) bool { return o == c })
		delete(s.open, contextID)
		if s.inFlight == c {
			s.cancelReq(errCancelled)
		}
	}
	s.finishLocked(contextID)
	if !slices.Contains(s.acks, contextID) {
		s.acks = append(s.acks, contextID)
	}
	s.poke()
	return nil
}

// Events delivers the session's events; it is closed when the session
// ends.
func (s *session) Events() <-chan providers.TTSEvent { return s.out }

// Close ends the session: the request in flight is cancelled, the worker
// stopped and waited for, Events closed. Safe to call more than once.
func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop(providers.ErrClosed)
	s.wg.Wait()
	return nil
}

// step is what run does next.
type step struct {
	ack     string      // send Cancelled for this id
	flushed string      // send Flushed for this id
	c       *ttsContext // request input for c
	input   string
}

// nextLocked picks the next step: acks first, then the head context's
// queued text, then its Flushed. ok is false when there is nothing to do.
func (s *session) nextLocked() (st step, ok bool) {
	if len(s.acks) > 0 {
		st.ack = s.acks[0]
		s.acks = slices.Delete(s.acks, 0, 1)
		return st, true
	}
	if len(s.contexts) > 0 {
		c := s.contexts[0]
		if strings.TrimSpace(c.queued) != "" {
			st.c = c
			st.input, c.queued = takeInput(c.queued, s.a.cfg.MaxInputRunes)
			return st, true
		}
		c.queued = ""
		if !c.flushed {
			return st, false
		}
		s.contexts = s.contexts[1:]
		delete(s.open, c.id)
		st.flushed = c.id
		return st, true
	}
	return st, false
}

// run is the worker: it takes one step at a time and sleeps when there is
// none. A failed request sends one Error event and ends the session.
func (s *session) run() {
	defer s.wg.Done()
	defer close(s.out)
	for {
		s.mu.Lock()
		st, ok := s.nextLocked()
		s.mu.Unlock()
		switch {
		case !ok:
			select {
			case <-s.wake:
			case <-s.ctx.Done():
				return
			}
		case st.ack != "":
			if !s.send(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: st.ack}, nil) {
				return
			}
		case st.flushed != "":
			if !s.send(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: st.flushed}, nil) {
				return
			}
		default:
			if err := s.speak(st.c, st.input); err != nil {
				if s.ctx.Err() != nil {
					return // closed or dropped: Events just closes
				}
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
				s.send(providers.TTSEvent{Kind: providers.TTSError, ContextID: st.c.id, Err: err}, nil)
				return
			}
		}
	}
}

// send hands ev to the reader. An event of context c (nil: none) is
// dropped when c is cancelled meanwhile. It is false when the session
// ended first. A wake taken here is given back on return, so run re-reads
// the state after this event.
func (s *session) send(ev providers.TTSEvent, c *ttsContext) bool {
	woken := false
	defer func() {
		if woken {
			s.poke()
		}
	}()
	for {
		select {
		case s.out <- ev:
			return true
		case <-s.wake:
			woken = true
			if c != nil {
				s.mu.Lock()
				gone := c.cancelled
				s.mu.Unlock()
				if gone {
					return true
				}
			}
		case <-s.ctx.Done():
			return false
		}
	}
}
