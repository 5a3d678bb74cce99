//go:build !amd64 || purego

package media

// dot is the K-tap dot product of the resampler: plain Go on this platform
// (or with the purego tag).
func dot(h, x []float32) float32 { return dotGeneric(h, x) }

// dotAccelerated tells whether dot uses a vector unit.
const dotAccelerated = false
