package elevenlabs

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/ttspump"
	"github.com/brisvox/brisvox/providers/internal/wsconn"
)

// context is one generation of a caller's context: an ElevenLabs context
// named wire on the socket.
type ctxState struct {
	user string // the caller's context id
	wire string // the id on the wire

	hasText   bool // text with a letter or digit was sent
	flushed   bool
	closeSent bool
	cancelled bool
	gotAudio  bool

	samples    int64         // audio samples delivered: the base of the offsets
	word       []byte        // the word being read, carried across messages
	inWord     bool          // word holds a word not yet emitted
	wordStart  time.Duration // its offset
	lastOffset time.Duration // the last word's offset: offsets never go back
	odd        byte          // a byte of a sample cut between two messages
	hasOdd     bool
}

// session is one socket of contexts; its events reach the caller through
// the pump.
type session struct {
	a      *Adapter
	ctx    context.Context
	ws     *wsconn.Session
	pump   *ttspump.Pump
	unhook func() bool // undoes the pump's Stop at the end of ctx

	msg message // the reader's decoder

	mu        sync.Mutex           // guards the pump's queue too
	contexts  map[string]*ctxState // by the caller's id: the live generation
	wires     map[string]*ctxState // by wire id: every context the service holds
	nextWire  int
	firstSent bool
	out       []byte // outbound message scratch

	unknown, strayBytes atomic.Int64
}

var _ providers.TTSSession = (*session)(nil)

// newSession makes a session whose pump is not started yet. Events is
// unbuffered: the reader holds back at EventBuffer queued events.
func newSession(ctx context.Context, a *Adapter) *session {
	s := &session{
		a:        a,
		ctx:      ctx,
		contexts: map[string]*ctxState{},
		wires:    map[string]*ctxState{},
	}
	s.pump = ttspump.New(&s.mu, 0)
	return s
}

// start runs the pump once the socket is open; the end of the session's
// context stops it at once.
func (s *session) start(ws *wsconn.Session) {
	s.mu.Lock()
	s.ws = ws
	s.mu.Unlock()
	s.pump.Start()
	s.unhook = context.AfterFunc(s.ctx, s.pump.Stop)
}

// Push sends text to a context, opening it on first use (an opening
// message, then the text). It never blocks. Errors: ErrContextFlushed
// while the context's Flush is being spoken, ErrTooManyContexts,
// ErrQueueFull, providers.ErrClosed after the end.
func (s *session) Push(contextID, text string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	if text == "" {
		return nil // an empty text would only be a keep-alive
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endingLocked() {
		return providers.ErrClosed
	}
	st := s.contexts[contextID]
	if st != nil && st.flushed {
		return ErrContextFlushed
	}
	if st == nil {
		if len(s.wires) >= s.a.cfg.MaxContexts {
			return ErrTooManyContexts
		}
		s.nextWire++
		st = &ctxState{user: contextID, wire: "c" + strconv.Itoa(s.nextWire)}
		extras := s.a.extras
		if !s.firstSent {
			extras = s.a.extrasFirst
		}
		if err := s.sendLocked(appendOpen(s.out[:0], st.wire, extras)); err != nil {
			return err
		}
		s.firstSent = true
		s.contexts[contextID], s.wires[st.wire] = st, st
	}
	if err := s.sendLocked(appendText(s.out[:0], st.wire, text)); err != nil {
		return err
	}
	if !st.hasText && speakable(text) {
		st.hasText = true
	}
	return nil
}

// Flush sends flush for the context; close_context follows at once if
// the context already had audio or holds nothing to speak, else with its
// first audio. Flushed follows the context's isFinal. A context that was
// never opened is Flushed at once. While a flushed context owes audio, the
// reply deadline runs.
func (s *session) Flush(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endingLocked() {
		return providers.ErrClosed
	}
	st := s.contexts[contextID]
	if st == nil {
		s.pump.QueueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: contextID, Rate: s.a.cfg.SampleRate})
		return nil
	}
	if st.flushed {
		return ErrContextFlushed
	}
	owed := s.owedLocked()
	if err := s.sendLocked(appendFlush(s.out[:0], st.wire)); err != nil {
		return err
	}
	st.flushed = true
	if st.gotAudio || !st.hasText {
		s.closeLocked(st)
	}
	if !owed {
		s.ws.ExpectReplyBy(time.Now().Add(s.a.cfg.ReplyTimeout))
	}
	return nil
}

// Cancel forgets the context at once: its events not yet handed over are
// dropped, the Cancelled ack goes ahead of every queued event but the
// acks before it, and
// close_context tells the service; the audio it still sends for the
// context is dropped on arrival. The context id may be used again at once
// (a new generation). A context never opened is acknowledged too. If the
// send queue is full the service is not told (ErrQueueFull) but the
// context is cancelled all the same.
func (s *session) Cancel(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endingLocked() {
		return providers.ErrClosed
	}
	var err error
	if st := s.contexts[contextID]; st != nil {
		delete(s.contexts, contextID)
		st.cancelled = true
		err = s.closeLocked(st)
	}
	s.pump.RetractLocked(contextID)
	s.pump.QueueAheadLocked(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: contextID, Rate: s.a.cfg.SampleRate})
	if !s.owedLocked() {
		s.ws.ExpectReplyBy(time.Time{})
	}
	return err
}

// Events delivers audio, words, Flushed and Cancelled in order; it is
// closed when the session ends, after one TTSError event if it failed.
func (s *session) Events() <-chan providers.TTSEvent { return s.pump.Events() }

// Close sends close_socket, closes the websocket (within CloseTimeout) and
// waits for the session's goroutines. No event is delivered after it.
func (s *session) Close() error {
	s.pump.Stop()
	_ = s.ws.Close()
	s.pump.Wait()
	s.unhook()
	return nil
}

// endingLocked tells whether the session is ending.
func (s *session) endingLocked() bool {
	if s.pump.EndedLocked() {
		return true
	}
	select {
	case <-s.ws.Closing():
		return true
	default:
		return false
	}
}

// sendLocked queues one text frame; it keeps b as the scratch buffer.
func (s *session) sendLocked(b []byte) error {
	s.out = b
	err := s.ws.Send(false, b)
	if errors.Is(err, wsconn.ErrQueueFull) {
		return ErrQueueFull
	}
	return err
}

// closeLocked sends close_context once; a send that failed is tried again
// at the next call (the context's next audio).
func (s *session) closeLocked(st *ctxState) error {
	if st.closeSent {
		return nil
	}
	err := s.sendLocked(appendCloseContext(s.out[:0], st.wire))
	st.closeSent = err == nil
	return err
}

// owedLocked tells whether audio is owed: a live context was flushed and
// has not ended.
func (s *session) owedLocked() bool {
	for _, st := range s.contexts {
		if st.flushed {
			return true
		}
	}
	return false
}

// onEnd records the end for the pump: a failure is delivered after the
// events already received; Close and the end of the context drop them.
func (s *session) onEnd(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pump.EndLocked(err)
}

// onMessage decodes one message on the reader goroutine and queues its
// events: the words that start in it, then its audio; Flushed for the
// isFinal of a live context. Messages of cancelled contexts are dropped.
func (s *session) onMessage(ws *wsconn.Session, _ bool, data []byte) error {
	m := &s.msg
	if err := m.decode(data); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A slow caller holds the reader back; the wait is not the service's.
	for s.pump.PendingLocked() >= s.a.cfg.EventBuffer {
		ws.ExpectReplyBy(time.Time{})
		s.mu.Unlock()
		select {
		case <-s.pump.Space():
			s.mu.Lock()
		case <-ws.Closing():
			s.mu.Lock()
			return nil
		}
	}
	st := s.wires[string(m.contextID)]
	switch {
	case st == nil:
		s.unknown.Add(1)
	case st.cancelled:
		if m.final {
			delete(s.wires, st.wire)
		}
	default:
		if m.aligned() != nil {
			s.wordsLocked(st, m)
		}
		if m.hasAudio {
			s.audioLocked(st, m)
			if st.flushed {
				// The service has the text: closing cannot lose it now.
				// A failed send is tried again with the next audio.
				_ = s.closeLocked(st)
			}
		}
		if m.final {
			s.finishLocked(st)
		}
	}
	if s.owedLocked() {
		ws.ExpectReplyBy(time.Now().Add(s.a.cfg.ReplyTimeout))
	} else {
		ws.ExpectReplyBy(time.Time{})
	}
	return nil
}

// wordsLocked queues the Word events of the words that start in the
// message's alignment (a word cut at its end is carried to the next). The
// times are relative to the message's audio, which starts where the
// context's audio delivered so far ends. A message may carry alignment
// without audio: its words count from there all the same.
func (s *session) wordsLocked(st *ctxState, m *message) {
	a := m.aligned()
	rate := int64(s.a.cfg.SampleRate)
	base := time.Duration(st.samples * int64(time.Second) / rate)
	for i := range a.ends {
		ch := a.char(i)
		if isSpace(ch) {
			s.endWordLocked(st)
			continue
		}
		if !st.inWord {
			start := max(base+time.Duration(a.starts[i])*time.Millisecond, st.lastOffset)
			st.inWord, st.word, st.wordStart, st.lastOffset = true, st.word[:0], start, start
		}
		st.word = append(st.word, ch...)
	}
}

// audioLocked queues the message's Audio (a sample cut at its end is
// carried to the next).
func (s *session) audioLocked(st *ctxState, m *message) {
	st.gotAudio = true
	pcm := m.audio
	n := len(pcm)
	if st.hasOdd {
		n++
	}
	if n < 2 {
		if n == 1 && !st.hasOdd {
			st.odd, st.hasOdd = pcm[0], true
		}
		return
	}
	out := make([]int16, n/2)
	i, j := 0, 0
	if st.hasOdd {
		out[0] = int16(uint16(st.odd) | uint16(pcm[0])<<8)
		i, j, st.hasOdd = 1, 1, false
	}
	for ; i < len(out); i, j = i+1, j+2 {
		out[i] = int16(uint16(pcm[j]) | uint16(pcm[j+1])<<8)
	}
	if j < len(pcm) {
		st.odd, st.hasOdd = pcm[j], true
	}
	st.samples += int64(len(out))
	s.pump.QueueLocked(providers.TTSEvent{Kind: providers.TTSAudio, ContextID: st.user, Rate: s.a.cfg.SampleRate, PCM: out})
}

// endWordLocked queues the word being read, if any.
func (s *session) endWordLocked(st *ctxState) {
	if !st.inWord {
		return
	}
	st.inWord = false
	s.pump.QueueLocked(providers.TTSEvent{Kind: providers.TTSWord, ContextID: st.user, Rate: s.a.cfg.SampleRate,
		Word: string(st.word), Offset: st.wordStart})
}

// finishLocked ends a live context at its isFinal: its last word, then
// Flushed. An isFinal the caller did not ask for (the service closed an
// idle context) ends the context the same way.
func (s *session) finishLocked(st *ctxState) {
	s.endWordLocked(st)
	if st.hasOdd {
		s.strayBytes.Add(1)
		st.hasOdd = false
	}
	s.pump.QueueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: st.user, Rate: s.a.cfg.SampleRate})
	if s.contexts[st.user] == st {
		delete(s.contexts, st.user)
	}
	delete(s.wires, st.wire)
}

// isSpace tells whether an alignment character is white space (or empty).
func isSpace(ch []byte) bool {
	if len(ch) == 0 {
		return true
	}
	r, _ := utf8.DecodeRune(ch)
	return unicode.IsSpace(r)
}

// speakable tells whether text holds a letter or a digit: text without
// (spaces, punctuation) may make no audio, so its context is closed at
// its Flush instead of at its first audio.
func speakable(text string) bool {
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}
