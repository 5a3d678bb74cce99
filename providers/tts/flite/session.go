package flite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// Bounds of a session's bookkeeping.
const (
	// maxReadyPieces is how many synthesized pieces of the context being
	// spoken may wait for the reader: synthesis stays at most this far
	// ahead of Events.
	maxReadyPieces = 2
	// maxPendingAcks bounds the cancels waiting for their Cancelled event.
	maxPendingAcks = 64
	// maxFinishedIDs is how many flushed or cancelled context ids the
	// session remembers to refuse Push and Flush to them.
	maxFinishedIDs = 256
)

// ttsContext is one context of a session: its unspoken text, its
// synthesized audio and how far that has gone out. Guarded by the
// session's mu.
type ttsContext struct {
	id string
	// pending are complete words not yet given to synthesis; partial is
	// the word after the last whitespace pushed; held counts their bytes.
	pending []string
	partial string
	held    int
	flushed bool
	// cancelled is set when Cancel removes the context: a synthesis in
	// flight for it is then dropped.
	cancelled bool
	inSynth   bool
	// ready are synthesized pieces; pos and wi are the next sample and
	// word of ready[0], offset the context's samples sent before it.
	ready  []piece
	pos    int
	wi     int
	offset int64
}

// synthJob is one synthesis call: the context's words and the text
// libflite is given, one token per word of tokens.
type synthJob struct {
	c      *ttsContext
	words  []string
	text   string
	tokens []int
}

// session is a flite TTS session. One goroutine (run) owns Events and
// sends every event; another (synthesize) makes the libflite calls, so a
// Cancel is acknowledged while a piece is being synthesized. Push, Flush
// and Cancel change the state under mu and wake run; they never block.
type session struct {
	cfg   Config
	voice *voice
	chunk int

	out  chan providers.TTSEvent
	wake chan struct{}
	jobs chan synthJob
	done <-chan struct{}
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu sync.Mutex
	// contexts are the open contexts in order of opening; contexts[0] is
	// being spoken. open finds them by id.
	contexts []*ttsContext
	open     map[string]*ttsContext
	finished map[string]struct{}
	finOrder []string
	acks     []string
	busy     bool
	err      error
	closed   bool
}

var _ providers.TTSSession = (*session)(nil)

// newSession starts a session's goroutines.
func newSession(parent context.Context, cfg Config, v *voice) *session {
	ctx, stop := context.WithCancel(parent)
	s := &session{
		cfg:      cfg,
		voice:    v,
		chunk:    cfg.chunkSamples(),
		out:      make(chan providers.TTSEvent),
		wake:     make(chan struct{}, 1),
		jobs:     make(chan synthJob, 1),
		done:     ctx.Done(),
		stop:     stop,
		open:     map[string]*ttsContext{},
		finished: map[string]struct{}{},
	}
	s.wg.Add(2)
	go s.run()
	go s.synthesize()
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
	select {
	case <-s.done:
		return providers.ErrClosed
	default:
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
		return nil, ErrContextClosed
	}
	if c := s.open[id]; c != nil {
		return c, nil
	}
	if len(s.open) >= s.cfg.MaxOpenContexts {
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

// Push adds text to a context, opening it on first use. A word cut
// between two pushes is joined: a word is complete when whitespace follows
// it, or at Flush. Text is spoken a phrase at a time (see takePiece).
func (s *session) Push(contextID, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.contextLocked(contextID)
	if err != nil {
		return err
	}
	if c.held+len(text) > s.cfg.MaxContextBytes {
		return fmt.Errorf("%w: %d bytes held, %d pushed, limit %d", ErrTextTooLong, c.held, len(text), s.cfg.MaxContextBytes)
	}
	n := len(c.pending)
	c.held -= len(c.partial)
	c.pending, c.partial = splitWords(c.pending, c.partial+text)
	for _, w := range c.pending[n:] {
		c.held += len(w)
	}
	c.held += len(c.partial)
	s.poke()
	return nil
}

// Flush completes the context's last word; Flushed follows its last audio.
// Flushing a context never pushed to opens it empty.
func (s *session) Flush(contextID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.contextLocked(contextID)
	if err != nil {
		return err
	}
	if c.partial != "" {
		c.pending = append(c.pending, c.partial)
		c.partial = ""
	}
	c.flushed = true
	s.finishLocked(contextID)
	s.poke()
	return nil
}

// Cancel drops what the context still owes and queues its Cancelled
// event ahead of every other. Any id is acknowledged, even one unknown or
// finished.
func (s *session) Cancel(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if c := s.open[contextID]; c != nil {
		c.cancelled = true
		c.ready = nil
		s.contexts = slices.DeleteFunc(s.contexts, func(o *ttsContext) bool { return o == c })
		delete(s.open, contextID)
	}
	s.finishLocked(contextID)
	if !slices.Contains(s.acks, contextID) {
		if len(s.acks) >= maxPendingAcks {
			return fmt.Errorf("%w: %d", ErrCancelBacklog, len(s.acks))
		}
		s.acks = append(s.acks, contextID)
	}
	s.poke()
	return nil
}

// Events delivers the session's events; it is closed when the session
// ends.
func (s *session) Events() <-chan providers.TTSEvent { return s.out }

// Close ends the session and waits for its goroutines; a synthesis call
// in flight finishes first (bounded by Config.MaxPieceRunes).
func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
	return nil
}

// step is an event run is sending and the context it advances.
type step struct {
	ev providers.TTSEvent
	c  *ttsContext
}

// run owns Events: it sends the next owed event, and starts a synthesis
// when the synthesizer is idle. A wake while it waits for the reader makes
// it look again, so a Cancel overtakes the event it was offering.
func (s *session) run() {
	defer s.wg.Done()
	defer close(s.out)
	defer s.stop()
	for {
		st, ok := s.next()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		select {
		case s.out <- st.ev:
			if st.ev.Kind == providers.TTSError {
				return
			}
			s.sent(st)
		case <-s.wake:
		case <-s.done:
			return
		}
	}
}

// next returns the owed event: the failure, then cancel acks, then the
// words, audio and Flushed of the context being spoken. It hands the
// synthesizer its next job on the way.
func (s *session) next() (step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return step{ev: providers.TTSEvent{Kind: providers.TTSError, Err: s.err}}, true
	}
	s.startSynthLocked()
	if len(s.acks) > 0 {
		return step{ev: providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: s.acks[0]}}, true
	}
	if len(s.contexts) == 0 {
		return step{}, false
	}
	c := s.contexts[0]
	if len(c.ready) > 0 {
		p := &c.ready[0]
		if c.wi < len(p.words) && p.words[c.wi].at < c.pos+s.chunk {
			w := p.words[c.wi]
			return step{c: c, ev: providers.TTSEvent{
				Kind: providers.TTSWord, ContextID: c.id, Word: w.text,
				Offset: s.duration(c.offset + int64(w.at)),
			}}, true
		}
		end := min(c.pos+s.chunk, len(p.pcm))
		return step{c: c, ev: providers.TTSEvent{
			Kind: providers.TTSAudio, ContextID: c.id, Rate: s.cfg.Rate, PCM: p.pcm[c.pos:end:end],
		}}, true
	}
	if c.flushed && len(c.pending) == 0 && !c.inSynth {
		return step{c: c, ev: providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: c.id}}, true
	}
	return step{}, false
}

// duration converts samples at the session's rate.
func (s *session) duration(samples int64) time.Duration {
	return time.Duration(samples * int64(time.Second) / int64(s.cfg.Rate))
}

// sent moves the state past an event the reader took. The context may
// have been cancelled meanwhile: then it is no longer contexts[0] and
// nothing of it moves.
func (s *session) sent(st step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.ev.Kind == providers.TTSCancelled {
		s.acks = slices.Delete(s.acks, 0, 1)
		return
	}
	if len(s.contexts) == 0 || s.contexts[0] != st.c {
		return
	}
	c := st.c
	switch st.ev.Kind {
	case providers.TTSWord:
		c.wi++
	case providers.TTSAudio:
		c.pos += len(st.ev.PCM)
		if p := c.ready[0]; c.pos >= len(p.pcm) {
			c.offset += int64(len(p.pcm))
			c.ready = slices.Delete(c.ready, 0, 1)
			c.pos, c.wi = 0, 0
		}
	case providers.TTSFlushed:
		s.contexts = slices.Delete(s.contexts, 0, 1)
		delete(s.open, c.id)
	}
}

// startSynthLocked hands the synthesizer the next piece of the context
// being spoken, when it is idle and the context's audio is not too far
// ahead of the reader. Words with nothing speakable are dropped here.
func (s *session) startSynthLocked() {
	if s.busy || len(s.contexts) == 0 {
		return
	}
	c := s.contexts[0]
	for len(c.ready) < maxReadyPieces {
		n := takePiece(c.pending, c.flushed, s.cfg.MaxPieceRunes)
		if n == 0 {
			return
		}
		words := slices.Clone(c.pending[:n])
		c.pending = slices.Delete(c.pending, 0, n)
		var b strings.Builder
		tokens := make([]int, 0, n)
		for i, w := range words {
			c.held -= len(w)
			if sp := spokenForm(w); sp != "" {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(sp)
				tokens = append(tokens, i)
			}
		}
		if len(tokens) == 0 {
			continue
		}
		s.busy, c.inSynth = true, true
		s.jobs <- synthJob{c: c, words: words, text: b.String(), tokens: tokens}
		return
	}
}

// synthesize runs the libflite calls, one job at a time. A job's result
// is dropped when its context was cancelled meanwhile; a failure ends the
// session.
func (s *session) synthesize() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case j := <-s.jobs:
			u, err := s.voice.synthesize(j.text, s.cfg.Rate)
			s.mu.Lock()
			s.busy, j.c.inSynth = false, false
			switch {
			case err != nil:
				if s.err == nil {
					s.err = err
				}
			case !j.c.cancelled:
				if p := buildPiece(j.words, j.tokens, u, s.cfg.Rate); len(p.pcm) > 0 {
					j.c.ready = append(j.c.ready, p)
				}
			}
			s.mu.Unlock()
			s.poke()
		}
	}
}
