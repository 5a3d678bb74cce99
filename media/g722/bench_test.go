package g722_test

import (
	"testing"

	"github.com/brisvox/brisvox/media/g722"
)

// TestNoAllocsPerFrame pins Encode and Decode at zero allocations per 20 ms
// frame. Mutation caught: a scratch slice made per call (e.g. for the QMF
// history or the sub-band samples).
func TestNoAllocsPerFrame(t *testing.T) {
	pcm := speechLike()[:320]
	codes := make([]byte, 160)
	out := make([]int16, 320)
	enc, dec := g722.NewEncoder(), g722.NewDecoder()
	if a := testing.AllocsPerRun(200, func() { enc.Encode(codes, pcm) }); a != 0 {
		t.Errorf("Encode: %.1f allocations per frame, want 0", a)
	}
	if a := testing.AllocsPerRun(200, func() { dec.Decode(out, codes) }); a != 0 {
		t.Errorf("Decode: %.1f allocations per frame, want 0", a)
	}
}

// BenchmarkEncodeFrame is one 20 ms frame (320 samples to 160 bytes).
func BenchmarkEncodeFrame(b *testing.B) {
	pcm := speechLike()
	dst := make([]byte, 160)
	enc := g722.NewEncoder()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		enc.Encode(dst, pcm[i:i+320])
		i = (i + 320) % (len(pcm) - 320)
	}
}

// BenchmarkDecodeFrame is one 20 ms frame (160 bytes to 320 samples).
func BenchmarkDecodeFrame(b *testing.B) {
	codes := encodeFrames(g722.NewEncoder(), speechLike())
	dst := make([]int16, 320)
	dec := g722.NewDecoder()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dec.Decode(dst, codes[i:i+160])
		i = (i + 160) % (len(codes) - 160)
	}
}
