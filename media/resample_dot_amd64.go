//go:build amd64 && !purego

package media

import "golang.org/x/sys/cpu"

// dotAccelerated tells whether dot uses AVX2 and FMA: decided once from the
// CPU, never changed.
var dotAccelerated = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot is the K-tap dot product of the resampler, len(h) a multiple of 8 and
// len(x) >= len(h). With AVX2 and FMA it does 8 fused multiply-adds per
// instruction (four vector partial sums); without, it is plain Go. The two
// round differently (fused vs separate multiply and add, other summation
// order) by about 1e-7 relative, which the int16 output almost never sees;
// a given machine always takes the same path, so a stream's output does not
// depend on how it is chunked.
func dot(h, x []float32) float32 {
	if dotAccelerated && len(h) > 0 {
		return dotFMA(&h[0], &x[:len(h)][0], len(h))
	}
	return dotGeneric(h, x)
}

// dotFMA sums h[i]·x[i] for i < n, n a multiple of 8 (a remainder is
// ignored), with AVX2 and FMA.
//
//go:noescape
func dotFMA(h, x *float32, n int) float32
