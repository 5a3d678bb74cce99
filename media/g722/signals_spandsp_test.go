//go:build cgo && spandsp

package g722_test

import "math"

// square is n samples of a full-scale square wave with the given half
// period in samples.
func square(n, half int) []int16 {
	out := make([]int16, n)
	for i := range out {
		if (i/half)%2 == 0 {
			out[i] = math.MaxInt16
		} else {
			out[i] = math.MinInt16
		}
	}
	return out
}

// syntheticSignals are the inputs the reference test (against libspandsp)
// compares on: silence, sines across the band, noise at several levels,
// full scale, and a chirp.
func syntheticSignals() []signal {
	const n = 16000 * 2 // 2 s
	chirp := make([]int16, n)
	for i := range chirp {
		t := float64(i) / 16000
		chirp[i] = int16(20000 * math.Sin(2*math.Pi*(50*t+1900*t*t)))
	}
	return []signal{
		{"silence", make([]int16, n)},
		{"sine 300 Hz -20 dBFS", sine(n, 300, 3277)},
		{"sine 1 kHz -6 dBFS", sine(n, 1000, 16423)},
		{"sine 3.4 kHz", sine(n, 3400, 12000)},
		{"sine 6 kHz high band", sine(n, 6000, 12000)},
		{"sine 7.9 kHz", sine(n, 7900, 8000)},
		{"sine 1 kHz full scale", sine(n, 1000, 32767)},
		{"noise quiet", noise(n, 100, 1)},
		{"noise mid", noise(n, 4000, 2)},
		{"noise full scale", noise(n, 32767, 3)},
		{"square full scale 8", square(n, 8)},
		{"square full scale 1", square(n, 1)},
		{"constant max", constant(n, math.MaxInt16)},
		{"constant min", constant(n, math.MinInt16)},
		{"chirp", chirp},
	}
}
