package kit

import (
	"math/rand/v2"
	"time"
)

// Backoff computes restart delays: exponential from Initial, capped at Max,
// with up to Jitter of the delay added from a seeded source so that calls
// restarting at once spread out while a run stays reproducible.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	// Jitter is the fraction of the delay added at random, in [0, 1].
	Jitter float64
	rng    *rand.Rand
}

// NewBackoff returns a Backoff whose jitter comes from seed.
func NewBackoff(initial, maxDelay time.Duration, jitter float64, seed uint64) *Backoff {
	return &Backoff{Initial: initial, Max: maxDelay, Jitter: jitter, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Delay is the wait before restart number attempt (1 is the first restart).
func (b *Backoff) Delay(attempt int) time.Duration {
	d := b.Initial
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	if d > b.Max {
		d = b.Max
	}
	if b.Jitter > 0 && d > 0 {
		d += time.Duration(b.rng.Float64() * b.Jitter * float64(d))
	}
	// Whole milliseconds keep timelines readable and runs comparable.
	return d.Truncate(time.Millisecond)
}
