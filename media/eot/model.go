package eot

import (
	"context"
	"sync"
)

// Model estimates whether the speaker has finished their turn.
//
// audio is mono 16 kHz PCM ending where the speech stopped; a model looks at
// its last 8 s (WindowSamples) and ignores anything before: callers may pass
// more, and should pass the whole turn up to 8 s, since the model uses the
// speech's rhythm and intonation, not only its last word. Shorter audio is
// padded with silence at the start. The result is the probability, in
// [0, 1], that the turn is complete. Implementations are safe for
// concurrent use and return ctx.Err() (wrapped) when ctx ends first.
type Model interface {
	Complete(ctx context.Context, audio []int16) (float32, error)
}

// Compile-time checks of the implementations.
var (
	_ Model = (*Fixed)(nil)
	_ Model = (*Runner)(nil)
)

// Fixed is a Model for tests: it answers the configured probabilities in
// order, repeating the last one when they run out (0 when none were given),
// whatever the audio. It records how much audio each call carried.
type Fixed struct {
	mu    sync.Mutex
	probs []float32
	next  int
	lens  []int
}

// NewFixed returns a Fixed model answering probs in order.
func NewFixed(probs ...float32) *Fixed {
	return &Fixed{probs: append([]float32(nil), probs...)}
}

// Complete returns the next configured probability, or ctx.Err() when ctx
// has ended (the probability is then not consumed).
func (f *Fixed) Complete(ctx context.Context, audio []int16) (float32, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lens = append(f.lens, len(audio))
	if len(f.probs) == 0 {
		return 0, nil
	}
	p := f.probs[min(f.next, len(f.probs)-1)]
	f.next++
	return p, nil
}

// Calls returns the audio length (in samples) of every call so far.
func (f *Fixed) Calls() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.lens...)
}
