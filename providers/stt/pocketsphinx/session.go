package pocketsphinx

import (
	"context"

	"github.com/brisvox/brisvox/providers"
)

// maxStep bounds the audio given to libpocketsphinx in one call (200 ms at
// 16 kHz, about 50 ms of CPU), so Close waits at most that long for the
// worker.
const maxStep = 3200

// Session is one streaming recognition on a pooled decoder. SendAudio and
// Finalize queue work for the session's worker goroutine, which owns the
// decoder, decodes off the caller's goroutine and sends the events; Close
// stops the worker and waits for it.
type Session struct {
	in     *inbox
	events chan providers.STTEvent
	cancel context.CancelFunc
	done   chan struct{}
}

var _ providers.STTSession = (*Session)(nil)

// worker is the state of one session's decoding loop.
type worker struct {
	s            *Session
	dec          recognizer
	release      func(recognizer, bool)
	interimEvery int // samples between looks at the hypothesis
	maxUtterance int // samples
}

func startSession(ctx context.Context, cfg Config, dec recognizer, release func(recognizer, bool)) *Session {
	ctx, cancel := context.WithCancel(ctx)
	s := &Session{
		in:     newInbox(cfg.samples(cfg.Queue)),
		events: make(chan providers.STTEvent, cfg.EventBuffer),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	w := &worker{
		s:            s,
		dec:          dec,
		release:      release,
		interimEvery: cfg.samples(cfg.InterimInterval),
		maxUtterance: cfg.samples(cfg.MaxUtterance),
	}
	go w.run(ctx)
	return s
}

// SendAudio queues 16 kHz PCM16 mono audio; it copies pcm and never
// blocks. When the queue is full the chunk is dropped and counted
// (Dropped). After Close or the end of the session it returns an error
// wrapping providers.ErrClosed.
func (s *Session) SendAudio(pcm []int16) error { return s.in.put(pcm) }

// Finalize asks for the final of the audio sent so far: the worker decodes
// it, ends the utterance and sends a final with SpeechFinal and
// FromFinalize, then starts the next utterance.
func (s *Session) Finalize() error { return s.in.finalize() }

// Events delivers interims, finals and at most one failure (Err set),
// then closes when the session ends.
func (s *Session) Events() <-chan providers.STTEvent { return s.events }

// Close ends the session, waits for its worker (at most one decoding step
// of maxStep samples) and returns the decoder to the pool. Events is
// closed when Close returns; nothing is sent after. Idempotent.
func (s *Session) Close() error {
	s.cancel() // the worker closes the inbox and Events on its way out
	<-s.done
	return nil
}

// Dropped is how many samples SendAudio dropped because the queue was
// full.
func (s *Session) Dropped() uint64 { return s.in.droppedSamples() }

// run decodes what the inbox holds until the session is closed, its
// context ends or the decoder fails.
func (w *worker) run(ctx context.Context) {
	s := w.s
	defer close(s.done)
	healthy, dirty := true, false
	defer func() {
		s.in.close()
		close(s.events)
		if healthy && dirty {
			// Drop the unfinished utterance so the next session starts clean.
			_, err := w.dec.endUtterance()
			healthy = err == nil && w.dec.startUtterance() == nil
		}
		w.release(w.dec, healthy)
	}()
	buf := make([]int16, min(maxStep, w.interimEvery))
	sinceLook, inUtterance, last := 0, 0, ""
	for {
		n, final := s.in.take(buf)
		if n == 0 && !final {
			select {
			case <-ctx.Done():
				return
			case <-s.in.wake:
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		if n > 0 {
			dirty = true
			if err := w.dec.process(buf[:n]); err != nil {
				healthy = false
				w.emit(ctx, providers.STTEvent{Err: err})
				return
			}
		}
		sinceLook += n
		inUtterance += n
		if sinceLook >= w.interimEvery && !final {
			sinceLook = 0
			if h := w.dec.hypothesis(); h != "" && h != last {
				last = h
				if !w.emit(ctx, providers.STTEvent{Text: h}) {
					return
				}
			}
		}
		if !final && inUtterance < w.maxUtterance {
			continue
		}
		text, err := w.dec.endUtterance()
		if err == nil {
			err = w.dec.startUtterance()
		}
		if err != nil {
			healthy = false
			w.emit(ctx, providers.STTEvent{Err: err})
			return
		}
		dirty, sinceLook, inUtterance, last = false, 0, 0, ""
		ev := providers.STTEvent{Text: text, Final: true, SpeechFinal: final, FromFinalize: final}
		if !w.emit(ctx, ev) {
			return
		}
	}
}

// emit sends ev unless the session has ended; false: stop.
func (w *worker) emit(ctx context.Context, ev providers.STTEvent) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case w.s.events <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
