package silero

import (
	"sync"
	"time"
)

// DefaultScoreDeadline is how long a call's window may wait in the pool's
// queue before it is not worth running: a window older than a few windows
// tells the speech gate nothing new.
const DefaultScoreDeadline = 200 * time.Millisecond

// CallScorer is one call's use of the pool: its stream and its one window
// in flight. Its method set is what the vad actor's model mode needs
// (actors/vad.Scorer); it allocates nothing per window.
type CallScorer struct {
	pool     *Pool
	stream   *Stream
	deadline time.Duration
	onDone   func(Result)

	mu     sync.Mutex
	done   func(p float32, err error)
	flying sync.WaitGroup
}

// NewScorer opens a call's stream on the pool. deadline bounds a window's
// wait in the queue (zero: DefaultScoreDeadline).
func (p *Pool) NewScorer(deadline time.Duration) *CallScorer {
	if deadline <= 0 {
		deadline = DefaultScoreDeadline
	}
	s := &CallScorer{pool: p, stream: p.NewStream(), deadline: deadline}
	s.onDone = s.result
	return s
}

// WindowSamples is the window length at the pool's rate.
func (s *CallScorer) WindowSamples() int { return s.pool.WindowSize() }

// Score submits window; done is called once with its speech probability,
// unless Score returns an error (the pool refused it: full, closed, or a
// window of the call still in flight).
func (s *CallScorer) Score(window []int16, done func(p float32, err error)) error {
	s.mu.Lock()
	s.done = done
	s.mu.Unlock()
	s.flying.Add(1)
	err := s.pool.Submit(Job{Stream: s.stream, PCM: window, Deadline: time.Now().Add(s.deadline), Done: s.onDone})
	if err != nil {
		s.flying.Done()
	}
	return err
}

func (s *CallScorer) result(r Result) {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	done(r.Prob, r.Err)
	s.flying.Done()
}

// Reset returns the call's stream to silence (actors/vad resets it after
// a long silence, see vad.StateResetter); it fails with ErrStreamBusy
// while a window is in flight.
func (s *CallScorer) Reset() error { return s.stream.Reset() }

// Close waits until the call's window in flight, if any, was answered:
// the pool answers every accepted window (at the latest at its deadline or
// when the pool closes), so this returns promptly.
func (s *CallScorer) Close() error {
	s.flying.Wait()
	return nil
}
