package aura

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/ttspump"
	"github.com/brisvox/brisvox/providers/internal/wsconn"
)

// actx is one context of a session. The first in the session's queue is
// on the wire; the others hold their texts until their turn.
type actx struct {
	id          string
	held        []string // texts not sent yet (the context waits, or a send failed)
	heldBytes   int
	final       bool // Flush was called
	onWire      bool // some of its text was sent
	unflushed   bool // text sent since its last Flush message
	owedFlushes int  // Flush messages sent, their Flushed not yet received
}

// Stats counts what a session dropped or saw.
type Stats struct {
	// Dropped counts the inbound messages that belong to no live
	// context (those of a cancelled one until Cleared, audio with no
	// context on the wire, an unexpected Flushed or Cleared).
	Dropped int64
	// Retracted counts the events of cancelled contexts taken back before
	// they reached Events.
	Retracted int64
	// ClearsUnsent counts the Clear messages the full send queue refused;
	// the session then waits for a Cleared that will not come and ends
	// with a Timeout rather than give the next context stale audio.
	ClearsUnsent int64
	// Warnings counts the service's Warning messages (e.g. more than 20
	// flushes a minute).
	Warnings int64
	// Pings counts the pings of the probe, Pongs those answered.
	Pings, Pongs int64
}

// session is one websocket with its contexts.
type session struct {
	cfg  *Config
	ws   *wsconn.Session
	msg  message // the reader goroutine's decode buffer
	pump *ttspump.Pump

	probeDone chan struct{}
	probeWake chan struct{} // the probe's state changed

	mu        sync.Mutex // guards the pump's queue too
	queue     []*actx    // queue[0] is on the wire
	byID      map[string]*actx
	heldBytes int  // over every context
	clearing  int  // Clears sent and not Cleared: what comes is a cancelled context's
	blocked   bool // the reader waits for room in the pump's queue
	owedSince bool // an answer is owed and the deadline is armed
	probeOn   bool
	odd       byte
	hasOdd    bool
	buf       []byte

	dropped, retracted, clearsUnsent, warnings, pings, pongs atomic.Int64
}

var _ providers.TTSSession = (*session)(nil)

func newSession(cfg *Config) *session {
	s := &session{
		cfg:       cfg,
		probeDone: make(chan struct{}),
		probeWake: make(chan struct{}, 1),
		byID:      map[string]*actx{},
	}
	s.pump = ttspump.New(&s.mu, cfg.EventBuffer)
	return s
}

// start runs the pump and the probe over ws.
func (s *session) start(ws *wsconn.Session) {
	s.mu.Lock()
	s.ws = ws
	s.mu.Unlock()
	s.pump.Start()
	go s.probe()
}

// Stats returns the session's counters so far.
func (s *session) Stats() Stats {
	return Stats{Dropped: s.dropped.Load(), Retracted: s.retracted.Load(), ClearsUnsent: s.clearsUnsent.Load(),
		Warnings: s.warnings.Load(), Pings: s.pings.Load(), Pongs: s.pongs.Load()}
}

// StatsOf returns the counters of a session this package opened.
func StatsOf(ts providers.TTSSession) (Stats, bool) {
	s, ok := ts.(*session)
	if !ok {
		return Stats{}, false
	}
	return s.Stats(), true
}

// closingLocked tells whether the session is ending or ended.
func (s *session) closingLocked() bool {
	select {
	case <-s.ws.Closing():
		return true
	default:
		return s.pump.EndedLocked()
	}
}

// owedLocked tells whether the service owes a message.
func (s *session) owedLocked() bool {
	return s.clearing > 0 || (len(s.queue) > 0 && s.queue[0].owedFlushes > 0)
}

// sendLocked queues one message; a full queue is ErrTextDropped.
func (s *session) sendLocked(data []byte) error {
	err := s.ws.Send(false, data)
	if errors.Is(err, wsconn.ErrQueueFull) {
		return ErrTextDropped
	}
	return err
}

// owesLocked arms the reply deadline for a message just sent that owes an
// answer, unless one was owed already (the deadline then runs from the
// last message received).
func (s *session) owesLocked() {
	if !s.owedSince && !s.blocked {
		s.ws.ExpectReplyBy(time.Now().Add(s.cfg.ReplyTimeout))
	}
	s.owedSince = true
}

// speakLocked sends text to c, the context on the wire; under PerText a
// Flush follows (a Flush the full queue refuses leaves the text unflushed
// for the context's own Flush).
func (s *session) speakLocked(c *actx, text string) error {
	s.buf = appendSpeak(s.buf[:0], text)
	if err := s.sendLocked(s.buf); err != nil {
		return err
	}
	c.onWire, c.unflushed = true, true
	if s.cfg.FlushPolicy == PerText {
		_ = s.flushLocked(c)
	}
	return nil
}

// flushLocked sends a Flush for c's unflushed text.
func (s *session) flushLocked(c *actx) error {
	if err := s.sendLocked(msgFlush); err != nil {
		return err
	}
	c.unflushed = false
	c.owedFlushes++
	s.owesLocked()
	return nil
}

// progressLocked moves the context on the wire as far as it can go: its
// held text out, its Flush out once Flush was called, its Flushed queued
// once every Flush is answered; then the next context takes the wire. A
// send the full queue refuses stops it; the next call tries again.
func (s *session) progressLocked() {
	for s.clearing == 0 && len(s.queue) > 0 {
		c := s.queue[0]
		if len(c.held) > 0 {
			if s.speakLocked(c, strings.Join(c.held, "")) != nil {
				break
			}
			s.heldBytes -= c.heldBytes
			c.held, c.heldBytes = nil, 0
		}
		if !c.final {
			break
		}
		if c.unflushed && s.flushLocked(c) != nil {
			break
		}
		if c.owedFlushes > 0 {
			break
		}
		s.queue = s.queue[1:]
		if s.byID[c.id] == c {
			delete(s.byID, c.id)
		}
		s.hasOdd = false
		s.queueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: c.id, Rate: s.cfg.SampleRate})
	}
	s.probeLocked()
}

// probeLocked turns the ping probe on while text sits unflushed on the
// server and nothing is owed, off otherwise (a ping in flight then runs
// out, its outcome ignored).
func (s *session) probeLocked() {
	on := !s.cfg.noProbe && !s.pump.EndedLocked() && !s.blocked && !s.owedLocked() && len(s.queue) > 0 && s.queue[0].unflushed
	if on == s.probeOn {
		return
	}
	s.probeOn = on
	signal(s.probeWake)
}

// context returns the context id names, opening it at the end of the
// queue when there is none; fresh says it was opened now.
func (s *session) contextLocked(id string) (c *actx, fresh bool) {
	if c = s.byID[id]; c != nil {
		return c, false
	}
	c = &actx{id: id}
	s.byID[id] = c
	s.queue = append(s.queue, c)
	return c, true
}

// forgetLocked removes c from the session.
func (s *session) forgetLocked(c *actx) {
	for i, x := range s.queue {
		if x == c {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	if s.byID[c.id] == c {
		delete(s.byID, c.id)
	}
	s.heldBytes -= c.heldBytes
}

// Push sends text to the context, opening it on first use (behind the
// contexts already open). Empty text sends nothing. It never blocks: a
// full send queue or hold is ErrTextDropped, a flushed context
// ErrContextClosed, an ended session providers.ErrClosed.
func (s *session) Push(contextID, text string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closingLocked() {
		return providers.ErrClosed
	}
	if text == "" {
		return nil
	}
	if c := s.byID[contextID]; c != nil && c.final {
		return fmt.Errorf("%w: Push", ErrContextClosed)
	}
	c, fresh := s.contextLocked(contextID)
	if c == s.queue[0] && s.clearing == 0 && len(c.held) == 0 {
		if err := s.speakLocked(c, text); err != nil {
			if fresh {
				s.forgetLocked(c)
			}
			return err
		}
	} else {
		if s.heldBytes+len(text) > s.cfg.MaxHeldBytes {
			if fresh {
				s.forgetLocked(c)
			}
			return fmt.Errorf("%w: %d bytes held", ErrTextDropped, s.heldBytes)
		}
		c.held = append(c.held, text)
		c.heldBytes += len(text)
		s.heldBytes += len(text)
	}
	s.progressLocked()
	return nil
}

// Flush ends the context: once its text is out, a Flush message asks the
// service to speak it, and Flushed follows its last audio. A context
// never pushed is Flushed in its turn; a second Flush does nothing.
func (s *session) Flush(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closingLocked() {
		return providers.ErrClosed
	}
	c, _ := s.contextLocked(contextID)
	if c.final {
		return nil
	}
	if c == s.queue[0] && s.clearing == 0 && len(c.held) == 0 && c.unflushed {
		if err := s.flushLocked(c); err != nil {
			return err
		}
	}
	c.final = true
	s.progressLocked()
	return nil
}

// Cancel stops the context. On the wire, a Clear goes out and what
// arrives until Cleared is dropped; waiting, its held text is let go.
// Its events not yet in Events are taken back and the Cancelled ack is
// queued at once: the caller need not wait a round trip for a barge-in.
// The next context takes the wire after Cleared. It never blocks.
func (s *session) Cancel(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closingLocked() {
		return providers.ErrClosed
	}
	if c := s.byID[contextID]; c != nil {
		onWire := len(s.queue) > 0 && s.queue[0] == c && c.onWire
		s.forgetLocked(c)
		if onWire {
			if err := s.ws.Send(false, msgClear); err != nil {
				s.clearsUnsent.Add(1)
			}
			s.clearing++
			s.hasOdd = false
			s.owesLocked()
		}
	}
	s.retracted.Add(int64(s.pump.RetractLocked(contextID)))
	s.queueLocked(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: contextID, Rate: s.cfg.SampleRate})
	s.progressLocked()
	return nil
}

// Events delivers audio, Flushed and Cancelled in order (no words: the
// service has no word times); it is closed when the session ends, after
// one event with Err set if it failed.
func (s *session) Events() <-chan providers.TTSEvent { return s.pump.Events() }

// Close sends Close, closes the websocket (within CloseTimeout) and waits
// for the session's goroutines. No event is delivered after it.
func (s *session) Close() error {
	s.pump.Stop()
	_ = s.ws.Close()
	s.pump.Wait()
	<-s.probeDone
	return nil
}

// signal wakes whoever waits on the one-slot channel c.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// queueLocked appends ev for the pump.
func (s *session) queueLocked(ev providers.TTSEvent) { s.pump.QueueLocked(ev) }

// onMessage decodes one message on the reader goroutine and applies it;
// while PendingEvents wait for the caller it waits too, with the deadline
// and the probe off (the wait is not the service's).
func (s *session) onMessage(ws *wsconn.Session, binary bool, data []byte) error {
	if err := decode(binary, data, &s.msg); err != nil {
		return err
	}
	for {
		s.mu.Lock()
		if s.pump.PendingLocked() < s.cfg.PendingEvents {
			break
		}
		s.blocked = true
		ws.ExpectReplyBy(time.Time{})
		s.probeLocked()
		s.mu.Unlock()
		select {
		case <-s.pump.Space():
		case <-ws.Closing():
			return nil
		}
	}
	defer s.mu.Unlock()
	s.blocked = false
	if err := s.applyLocked(&s.msg); err != nil {
		return err
	}
	s.progressLocked()
	s.owedSince = s.owedLocked()
	if s.owedSince {
		ws.ExpectReplyBy(time.Now().Add(s.cfg.ReplyTimeout))
	} else {
		ws.ExpectReplyBy(time.Time{})
	}
	s.probeLocked()
	return nil
}

// applyLocked turns a decoded message into events of the context on the
// wire.
func (s *session) applyLocked(m *message) error {
	var c *actx
	if len(s.queue) > 0 && s.queue[0].onWire {
		c = s.queue[0]
	}
	switch m.kind {
	case kindAudio:
		// While a Clear is unanswered no context is on the wire (the next
		// goes out after Cleared), so the cancelled one's audio has none.
		if c == nil {
			s.dropped.Add(1)
			return nil
		}
		if pcm := pcm16(m.audio, &s.odd, &s.hasOdd); len(pcm) > 0 {
			s.queueLocked(providers.TTSEvent{Kind: providers.TTSAudio, ContextID: c.id, Rate: s.cfg.SampleRate, PCM: pcm})
		}
	case kindFlushed:
		if c == nil || c.owedFlushes == 0 {
			s.dropped.Add(1)
			return nil
		}
		c.owedFlushes--
	case kindCleared:
		if s.clearing == 0 {
			s.dropped.Add(1)
			return nil
		}
		s.clearing--
		s.hasOdd = false
	case kindWarning:
		s.warnings.Add(1)
	case kindError:
		return &providers.Protocol{Detail: "error message from the service: " + m.code}
	}
	return nil
}

// onEnd records the session's end for the pump. A session ended by Close
// or by its context drops what is pending and reports nothing.
func (s *session) onEnd(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pump.EndLocked(err)
	s.probeLocked()
}
