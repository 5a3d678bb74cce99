package pocketsphinx

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// maxStep bounds the audio given to libpocketsphinx in one call (200 ms at
// 16 kHz, about 50 ms of CPU), so Close waits at most that long for the
// worker.
const maxStep = 3200

// Session is one streaming recognition that holds a pooled decoder only
// while the caller speaks. SendAudio, SpeechStarted and Finalize queue work
// for the session's worker goroutine, which keeps the latest PreRoll of
// audio while it holds no decoder, takes one from the pool at a speech
// start, decodes off the caller's goroutine, sends the events, and gives
// the decoder back after the utterance's final. Close stops the worker and
// waits for it.
type Session struct {
	in     *inbox
	events chan providers.STTEvent
	cancel context.CancelFunc
	done   chan struct{}
}

var (
	_ providers.STTSession   = (*Session)(nil)
	_ providers.SpeechMarker = (*Session)(nil)
)

// usage is the audio the workers of one STT took, and the part of it a
// decoder heard: their ratio is the fraction of the time a decoder is
// held.
type usage struct {
	taken   atomic.Uint64 // samples
	decoded atomic.Uint64 // samples
}

// worker is the state of one session's decoding loop.
type worker struct {
	s            *Session
	pool         *pool
	use          *usage
	acquireWait  time.Duration
	interimEvery int // samples between looks at the hypothesis
	maxUtterance int // samples
	pre          *preroll

	// The utterance: dec is nil while the session holds no decoder.
	dec         recognizer
	dirty       bool // dec has audio of an unfinished utterance
	sinceLook   int
	inUtterance int
	last        string
}

func startSession(ctx context.Context, cfg Config, p *pool, use *usage) *Session {
	ctx, cancel := context.WithCancel(ctx)
	s := &Session{
		in:     newInbox(cfg.samples(cfg.Queue)),
		events: make(chan providers.STTEvent, cfg.EventBuffer),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	w := &worker{
		s:            s,
		pool:         p,
		use:          use,
		acquireWait:  cfg.AcquireTimeout,
		interimEvery: cfg.samples(cfg.InterimInterval),
		maxUtterance: cfg.samples(cfg.MaxUtterance),
		pre:          newPreroll(cfg.samples(cfg.PreRoll)),
	}
	go w.run(ctx)
	return s
}

// SendAudio queues 16 kHz PCM16 mono audio; it copies pcm and never
// blocks. When the queue is full the chunk is dropped and counted
// (Dropped). After Close or the end of the session it returns an error
// wrapping providers.ErrClosed.
func (s *Session) SendAudio(pcm []int16) error { return s.in.put(pcm) }

// SpeechStarted marks the start of speech after the audio sent so far:
// the worker takes a decoder (waiting at most AcquireTimeout when all are
// busy) and decodes the PreRoll before the mark and everything after, up
// to the utterance's final. Without it the session decodes nothing. When
// the wait times out the utterance is dropped (counted in Stats.TimedOut)
// and its Finalize is answered with an empty final.
func (s *Session) SpeechStarted() error { return s.in.start() }

// Finalize asks for the final of the audio sent so far: the worker decodes
// it, ends the utterance, gives the decoder back and sends a final with
// SpeechFinal and FromFinalize. A Finalize when no decoder is held (no
// speech start, or the wait for a decoder timed out) gets an empty one.
func (s *Session) Finalize() error { return s.in.finalize() }

// Events delivers interims, finals and at most one failure (Err set),
// then closes when the session ends.
func (s *Session) Events() <-chan providers.STTEvent { return s.events }

// Close ends the session, waits for its worker (at most one decoding step
// of maxStep samples, or a model load it started) and returns any decoder
// it holds to the pool, with its utterance dropped. Events is closed when
// Close returns; nothing is sent after. Idempotent.
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
	defer func() {
		s.in.close()
		close(s.events)
		w.giveBack()
	}()
	buf := make([]int16, min(maxStep, w.interimEvery))
	for {
		n, m := s.in.take(buf)
		if n == 0 && m == noMark {
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
		w.use.taken.Add(uint64(n))
		if !w.audio(ctx, buf[:n], m == finalMark) {
			return
		}
		switch {
		case m == startMark && w.dec == nil:
			if !w.acquire(ctx) {
				return
			}
		case m == finalMark:
			if !w.final(ctx, true) {
				return
			}
		case w.dec != nil && w.inUtterance >= w.maxUtterance:
			if !w.final(ctx, false) {
				return
			}
		}
	}
}

// audio decodes pcm when a decoder is held, with an interim when the
// hypothesis changed after InterimInterval (none right before a final),
// and keeps it in the pre-roll otherwise. false: stop.
func (w *worker) audio(ctx context.Context, pcm []int16, final bool) bool {
	if w.dec == nil {
		w.pre.write(pcm)
		return true
	}
	if !w.decode(ctx, pcm) {
		return false
	}
	if w.sinceLook >= w.interimEvery && !final {
		w.sinceLook = 0
		if h := w.dec.hypothesis(); h != "" && h != w.last {
			w.last = h
			return w.emit(ctx, providers.STTEvent{Text: h})
		}
	}
	return true
}

// decode gives pcm to the held decoder; a failure is the session's end.
func (w *worker) decode(ctx context.Context, pcm []int16) bool {
	if len(pcm) == 0 {
		return true
	}
	w.dirty = true
	if err := w.dec.process(pcm); err != nil {
		w.fail(ctx, err)
		return false
	}
	w.use.decoded.Add(uint64(len(pcm)))
	w.sinceLook += len(pcm)
	w.inUtterance += len(pcm)
	return true
}

// acquire takes a decoder for the utterance that starts and gives it the
// pre-roll. A wait that times out drops the utterance: the session goes on
// without a decoder. false: stop (the session ended, the engine closed or
// a decoder failed to load).
func (w *worker) acquire(ctx context.Context) bool {
	dec, err := w.pool.acquire(ctx, w.acquireWait)
	var timeout *providers.Timeout
	switch {
	case ctx.Err() != nil:
		if dec != nil {
			w.pool.release(dec, true)
		}
		return false
	case errors.As(err, &timeout):
		return true // counted by the pool; the Finalize gets an empty final
	case err != nil:
		w.emit(ctx, providers.STTEvent{Err: err})
		return false
	}
	w.dec, w.sinceLook, w.inUtterance, w.last = dec, 0, 0, ""
	return w.pre.drain(maxStep, func(pcm []int16) error {
		if !w.decode(ctx, pcm) {
			return errStop
		}
		return nil
	}) == nil
}

// final ends the utterance, gives the decoder back and sends the final;
// fromFinalize: asked by Finalize (else cut at MaxUtterance). Without a
// decoder a Finalize still gets its final, empty. false: stop.
func (w *worker) final(ctx context.Context, fromFinalize bool) bool {
	text := ""
	if w.dec != nil {
		t, err := w.dec.endUtterance()
		if err == nil {
			err = w.dec.startUtterance()
		}
		if err != nil {
			w.fail(ctx, err)
			return false
		}
		text = t
		w.dirty = false
		w.pool.release(w.dec, true)
		w.dec = nil
	}
	return w.emit(ctx, providers.STTEvent{Text: text, Final: true, SpeechFinal: fromFinalize, FromFinalize: fromFinalize})
}

// fail sends a decoder failure; the decoder is freed, not pooled.
func (w *worker) fail(ctx context.Context, err error) {
	w.pool.release(w.dec, false)
	w.dec = nil
	w.emit(ctx, providers.STTEvent{Err: err})
}

// giveBack returns a held decoder to the pool on the way out, its
// unfinished utterance dropped so that the next user starts clean.
func (w *worker) giveBack() {
	if w.dec == nil {
		return
	}
	healthy := true
	if w.dirty {
		_, err := w.dec.endUtterance()
		healthy = err == nil && w.dec.startUtterance() == nil
	}
	w.pool.release(w.dec, healthy)
	w.dec = nil
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
