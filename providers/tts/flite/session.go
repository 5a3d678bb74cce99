package flite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/ttspump"
)

// Bounds of a session's bookkeeping. Synthesis stays at most one piece
// ahead of the piece whose events wait in the pump: the next piece is
// held (ttsContext.ready) until the pump's queue is empty.
const (
	// maxPendingAcks bounds the cancels waiting for their Cancelled event.
	maxPendingAcks = 64
	// maxFinishedIDs is how many flushed or cancelled context ids the
	// session remembers to refuse Push and Flush to them.
	maxFinishedIDs = 256
)

// ttsContext is one context of a session: its unspoken text, its
// synthesized audio not yet queued and how much went to the pump. Guarded
// by the session's mu.
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
	// ready is a synthesized piece waiting for the pump's queue to empty
	// (when hasReady); offset counts the context's samples queued before
	// it.
	ready    piece
	hasReady bool
	offset   int64
}

// synthJob is one synthesis call: the context's words and the text
// libflite is given, one token per word of tokens.
type synthJob struct {
	c      *ttsContext
	words  []string
	text   string
	tokens []int
}

// session is a flite TTS session. One goroutine (synthesize) makes the
// libflite calls and queues each piece's events in the pump, whose
// goroutine hands them to Events; so a Cancel is acknowledged while a
// piece is being synthesized. Push, Flush and Cancel change the state
// under mu and wake synthesize; they never block.
type session struct {
	cfg   Config
	voice *voice
	chunk int

	pump *ttspump.Pump
	wake chan struct{}
	done <-chan struct{}
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu sync.Mutex // guards the pump's queue and the contexts too
	// contexts are the open contexts in order of opening (the head is
	// being spoken) and the finished ids.
	contexts *ttspump.Contexts[ttsContext]
	err      error
	closed   bool
}

var _ providers.TTSSession = (*session)(nil)

// newSession starts a session's goroutines: the synthesizer and the
// pump, which the end of the session's context (Close, or the caller's)
// stops at once.
func newSession(parent context.Context, cfg Config, v *voice) *session {
	ctx, stop := context.WithCancel(parent)
	s := &session{
		cfg:      cfg,
		voice:    v,
		chunk:    cfg.chunkSamples(),
		wake:     make(chan struct{}, 1),
		done:     ctx.Done(),
		stop:     stop,
		contexts: ttspump.NewContexts[ttsContext](maxFinishedIDs),
	}
	s.pump = ttspump.New(&s.mu, 0)
	s.pump.Start()
	context.AfterFunc(ctx, s.pump.Stop)
	s.wg.Add(1)
	go s.synthesize()
	return s
}

// poke wakes synthesize without blocking.
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
	if s.contexts.Finished(id) {
		return nil, ErrContextClosed
	}
	if c := s.contexts.Get(id); c != nil {
		return c, nil
	}
	if n := s.contexts.Len(); n >= s.cfg.MaxOpenContexts {
		return nil, fmt.Errorf("%w: %d", ErrTooManyContexts, n)
	}
	c := &ttsContext{id: id}
	s.contexts.Open(id, c)
	return c, nil
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
	s.contexts.Finish(contextID)
	s.poke()
	return nil
}

// Cancel drops what the context still owes, its events in the pump
// included, and queues its Cancelled event ahead of every other but the
// acks before it. Any id is acknowledged, even one unknown or finished.
func (s *session) Cancel(contextID string) error {
	if contextID == "" {
		return ErrEmptyContextID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if c := s.contexts.Close(contextID); c != nil {
		c.cancelled = true
		c.ready, c.hasReady = piece{}, false
	}
	s.contexts.Finish(contextID)
	s.pump.RetractLocked(contextID)
	if acks, acked := s.pump.AcksLocked(contextID); !acked {
		if acks >= maxPendingAcks {
			return fmt.Errorf("%w: %d", ErrCancelBacklog, acks)
		}
		s.pump.QueueAheadLocked(providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: contextID})
	}
	s.poke()
	return nil
}

// Events delivers the session's events; it is closed when the session
// ends.
func (s *session) Events() <-chan providers.TTSEvent { return s.pump.Events() }

// Close ends the session and waits for its goroutines; a synthesis call
// in flight finishes first (bounded by Config.MaxPieceRunes).
func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
	s.pump.Wait()
	return nil
}

// duration converts samples at the session's rate.
func (s *session) duration(samples int64) time.Duration {
	return time.Duration(samples * int64(time.Second) / int64(s.cfg.Rate))
}

// nextLocked moves the contexts on as far as they go without libflite:
// the held piece of the context being spoken into the pump once its queue
// is empty, that context's Flushed once all of it is queued (then the
// next context is spoken). It returns the next synthesis job, if one is
// due; space tells that a held piece waits for the pump's queue.
func (s *session) nextLocked() (j synthJob, ok, space bool) {
	for c := s.contexts.Head(); c != nil; c = s.contexts.Head() {
		if c.hasReady {
			if s.pump.PendingLocked() > 0 {
				return j, false, true
			}
			s.queuePieceLocked(c, &c.ready)
			c.ready, c.hasReady = piece{}, false
		}
		if j, ok = s.jobLocked(c); ok {
			return j, true, false
		}
		if !c.flushed || len(c.pending) > 0 {
			return j, false, false
		}
		s.pump.QueueLocked(providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: c.id})
		s.contexts.Close(c.id)
	}
	return j, false, false
}

// queuePieceLocked queues a piece's events: its audio in chunks, each
// word just before the chunk it starts in.
func (s *session) queuePieceLocked(c *ttsContext, p *piece) {
	wi := 0
	for pos := 0; pos < len(p.pcm); {
		for wi < len(p.words) && p.words[wi].at < pos+s.chunk {
			w := p.words[wi]
			s.pump.QueueLocked(providers.TTSEvent{
				Kind: providers.TTSWord, ContextID: c.id, Word: w.text,
				Offset: s.duration(c.offset + int64(w.at)),
			})
			wi++
		}
		end := min(pos+s.chunk, len(p.pcm))
		s.pump.QueueLocked(providers.TTSEvent{
			Kind: providers.TTSAudio, ContextID: c.id, Rate: s.cfg.Rate, PCM: p.pcm[pos:end:end],
		})
		pos = end
	}
	c.offset += int64(len(p.pcm))
}

// jobLocked takes the next piece of c's text for libflite. Words with
// nothing speakable are dropped here.
func (s *session) jobLocked(c *ttsContext) (synthJob, bool) {
	for {
		// Nothing of c queued yet: its first piece, which the caller
		// waits for.
		n := takePiece(c.pending, c.flushed, s.cfg.MaxPieceRunes, c.offset == 0)
		if n == 0 {
			return synthJob{}, false
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
		return synthJob{c: c, words: words, text: b.String(), tokens: tokens}, true
	}
}

// synthesize runs the libflite calls, one job at a time, and queues
// their events. A job's result is dropped when its context was cancelled
// meanwhile; a failure ends the session, its Error event next.
func (s *session) synthesize() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		j, ok, space := s.nextLocked()
		s.mu.Unlock()
		if !ok {
			var room <-chan struct{}
			if space {
				room = s.pump.Space()
			}
			select {
			case <-s.wake:
			case <-room:
			case <-s.done:
				return
			}
			continue
		}
		u, err := s.voice.synthesize(j.text, s.cfg.Rate)
		s.mu.Lock()
		switch {
		case err != nil:
			if s.err == nil {
				s.err = err
			}
			s.pump.FailLocked(err, "")
			s.mu.Unlock()
			return
		case !j.c.cancelled:
			if p := buildPiece(j.words, j.tokens, u, s.cfg.Rate); len(p.pcm) > 0 {
				j.c.ready, j.c.hasReady = p, true
			}
		}
		s.mu.Unlock()
	}
}
