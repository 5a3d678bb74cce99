package media

// dotGeneric is the K-tap dot product in plain Go, for len(h) a multiple of
// 8 and len(x) >= len(h). Four partial sums keep the adds from waiting on
// each other.
func dotGeneric(h, x []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(h) >= 4 && len(x) >= 4 {
		s0 += h[0] * x[0]
		s1 += h[1] * x[1]
		s2 += h[2] * x[2]
		s3 += h[3] * x[3]
		h, x = h[4:], x[4:]
	}
	return (s0 + s1) + (s2 + s3)
}
