package kit

import (
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// Mutation caught: doubling once too often (i <= attempt in the loop)
// shifts the sequence; a missing cap at Max overshoots it.
func TestBackoffDoublesToMax(t *testing.T) {
	tests := []struct {
		name         string
		initial, max time.Duration
		want         []time.Duration // attempts 1, 2, ...
	}{
		{name: "session defaults", initial: 100 * ms, max: 2 * time.Second,
			want: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 2000 * ms, 2000 * ms, 2000 * ms}},
		{name: "max not a power of two of initial", initial: 30 * ms, max: 100 * ms,
			want: []time.Duration{30 * ms, 60 * ms, 100 * ms, 100 * ms}},
		{name: "initial equals max", initial: 50 * ms, max: 50 * ms,
			want: []time.Duration{50 * ms, 50 * ms, 50 * ms}},
		{name: "zero initial", initial: 0, max: time.Second,
			want: []time.Duration{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBackoff(tt.initial, tt.max, 0, 1)
			var got []time.Duration
			for attempt := 1; attempt <= len(tt.want); attempt++ {
				got = append(got, b.Delay(attempt))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("delays %v, want %v", got, tt.want)
			}
		})
	}
}

// Mutation caught: jitter that can subtract (rng.Float64()*2-1) or scale
// past Jitter (no b.Jitter factor) leaves [d, d*(1+Jitter)].
func TestBackoffJitterBounds(t *testing.T) {
	tests := []struct {
		name   string
		jitter float64
	}{
		{name: "default 0.2", jitter: 0.2},
		{name: "small 0.01", jitter: 0.01},
		{name: "full 1", jitter: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := NewBackoff(100*ms, 2*time.Second, 0, 0)
			for seed := range uint64(50) {
				b := NewBackoff(100*ms, 2*time.Second, tt.jitter, seed)
				for attempt := 1; attempt <= 7; attempt++ {
					d, base := b.Delay(attempt), plain.Delay(attempt)
					hi := time.Duration(float64(base) * (1 + tt.jitter))
					if d < base || d > hi {
						t.Fatalf("seed %d attempt %d: %v outside [%v, %v]", seed, attempt, d, base, hi)
					}
				}
			}
		})
	}
}

func delays(seed uint64, n int) []time.Duration {
	b := NewBackoff(100*ms, 2*time.Second, 0.2, seed)
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = b.Delay(i + 1)
	}
	return out
}

// Mutation caught: a source not derived from seed (a fixed or global rng)
// makes different seeds equal, or the same seed differ.
func TestBackoffSeed(t *testing.T) {
	tests := []struct {
		name     string
		a, b     uint64
		wantSame bool
	}{
		{name: "same seed, same sequence", a: 7, b: 7, wantSame: true},
		{name: "zero seed repeats", a: 0, b: 0, wantSame: true},
		{name: "different seeds differ", a: 7, b: 8, wantSame: false},
		{name: "zero and one differ", a: 0, b: 1, wantSame: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			da, db := delays(tt.a, 10), delays(tt.b, 10)
			if same := slices.Equal(da, db); same != tt.wantSame {
				t.Errorf("seeds %d and %d: same = %v, want %v\n%v\n%v", tt.a, tt.b, same, tt.wantSame, da, db)
			}
		})
	}
}

// Mutation caught: dropping the Truncate(time.Millisecond) leaves the
// jittered nanoseconds in.
func TestBackoffWholeMilliseconds(t *testing.T) {
	tests := []struct {
		name    string
		initial time.Duration
		jitter  float64
	}{
		{name: "jittered", initial: 100 * ms, jitter: 0.2},
		{name: "initial with a fraction of a millisecond", initial: 100*ms + 300*time.Microsecond, jitter: 0},
		{name: "both", initial: 33*ms + 1, jitter: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(20) {
				b := NewBackoff(tt.initial, 5*time.Second, tt.jitter, seed)
				for attempt := 1; attempt <= 8; attempt++ {
					if d := b.Delay(attempt); d%ms != 0 {
						t.Fatalf("seed %d attempt %d: %v is not whole milliseconds", seed, attempt, d)
					}
				}
			}
		})
	}
}
