package main

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestLineNoise: the callers' --noise-dbfs noise has the RMS asked for,
// is the same for a seed, and addNoise saturates and wraps. Mutations
// caught: a power ratio (10^(dB/10)) for the RMS; the sum wrapping
// instead of saturating; the offset not wrapping (an index panic).
func TestLineNoise(t *testing.T) {
	n := lineNoise(1, -50)
	var sum float64
	for _, v := range n {
		sum += float64(v) * float64(v)
	}
	want := 32768 * math.Pow(10, -50.0/20)
	if got := math.Sqrt(sum / float64(len(n))); math.Abs(got-want) > 0.02*want {
		t.Errorf("RMS %.2f, want %.2f", got, want)
	}
	if m := lineNoise(1, -50); m[1234] != n[1234] || m[99999] != n[99999] {
		t.Error("the same seed gave other noise")
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint16(b, uint16(int16(math.MaxInt16-1)))
	minus := int16(math.MinInt16 + 1)
	binary.LittleEndian.PutUint16(b[2:], uint16(minus))
	at := addNoise(b, []int16{100, -100, 5}, 0)
	if got := int16(binary.LittleEndian.Uint16(b)); got != math.MaxInt16 {
		t.Errorf("sample 0 = %d, want saturated %d", got, math.MaxInt16)
	}
	if got := int16(binary.LittleEndian.Uint16(b[2:])); got != math.MinInt16 {
		t.Errorf("sample 1 = %d, want saturated %d", got, math.MinInt16)
	}
	if got := int16(binary.LittleEndian.Uint16(b[6:])); got != 100 || at != 1 {
		t.Errorf("sample 3 = %d, next offset %d: want 100 (wrapped), 1", got, at)
	}
}
