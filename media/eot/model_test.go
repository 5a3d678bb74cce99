package eot

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestFixed pins the test model's script. Mutation caught: a cancelled call
// consuming a probability.
func TestFixed(t *testing.T) {
	ctx := context.Background()
	f := NewFixed(0.2, 0.7)
	for i, want := range []float32{0.2, 0.7, 0.7} {
		if got, err := f.Complete(ctx, make([]int16, i)); err != nil || got != want {
			t.Fatalf("call %d: %v, %v; want %v", i, got, err, want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	// Two probabilities: with one, a consumed probability would not show
	// (the last one repeats).
	g := NewFixed(0.3, 0.6)
	if _, err := g.Complete(cctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v", err)
	}
	if got, _ := g.Complete(ctx, nil); got != 0.3 {
		t.Fatalf("after a cancelled call: %v, want 0.3", got)
	}
	if got, _ := NewFixed().Complete(ctx, nil); got != 0 {
		t.Fatalf("empty script: %v, want 0", got)
	}
	if got := f.Calls(); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("calls %v", got)
	}
}
