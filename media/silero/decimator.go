package silero

import "math"

// The decimator that halves 16 kHz windows for the 8 kHz model is a
// half-band FIR lowpass, then every other sample: halfbandTaps taps, a
// Kaiser-windowed sinc with its -6 dB point at 4 kHz, designed for 60 dB
// (Kaiser beta 5.65). Half of a half-band filter's taps are zero, and the
// rest are symmetric, so each output is halfbandPairs multiplies of a sum
// of two samples plus the centre tap: 33k instructions per window
// (callgrind on BenchmarkDecimate), against 42k with media's general
// resampler at a comparable response (60 dB, 40 taps), 8 % of what the 8
// kHz model takes per window. The transition band is about 3.1-4.9 kHz:
// what folds back from 4-4.9 kHz lands above 3.1 kHz, the rest is at
// least 60 dB down (a 6 kHz tone: 74 dB), and the speech band passes
// within 0.01 dB (TestDecimator). Its delay is 17 input samples (1.06 ms),
// which the window's 32 ms steps do not resolve.
// decimate writes the sum out for these 35 taps (9 pairs).
const (
	halfbandTaps  = 35
	halfbandPairs = (halfbandTaps + 1) / 4 // the non-zero taps either side of the centre
	halfbandBeta  = 5.65
)

// halfband holds the non-zero taps beside the centre: halfband[i] is the
// tap at distance 2i+1 from it. halfbandCentre is the centre tap. Their
// sum, twice the pairs plus the centre, is 1 (unit gain at DC).
var halfband, halfbandCentre = designHalfband()

func designHalfband() ([halfbandPairs]float32, float32) {
	const c = (halfbandTaps - 1) / 2
	i0 := func(x float64) float64 { // the modified Bessel function I0
		sum, term := 1.0, 1.0
		for k := 1; k < 50; k++ {
			term *= (x / 2) / float64(k)
			sum += term * term
		}
		return sum
	}
	tap := func(m int) float64 { // distance m from the centre
		r := float64(m) / c
		w := i0(halfbandBeta*math.Sqrt(1-r*r)) / i0(halfbandBeta)
		if m == 0 {
			return 0.5 * w
		}
		x := math.Pi * float64(m) / 2
		return 0.5 * math.Sin(x) / x * w
	}
	var taps [halfbandPairs]float64
	sum := tap(0)
	for i := range taps {
		taps[i] = tap(2*i + 1)
		sum += 2 * taps[i]
	}
	var out [halfbandPairs]float32
	for i, t := range taps {
		out[i] = float32(t / sum)
	}
	return out, float32(tap(0) / sum)
}

// decimator halves one stream's 16 kHz windows to 8 kHz. It keeps the
// last halfbandTaps-1 input samples from window to window, so the windows
// of a stream are filtered as one signal.
type decimator struct {
	// buf is the history, then the window being decimated.
	buf [halfbandTaps - 1 + maxWindow]float32
}

func newDecimator() *decimator { return &decimator{} }

// decimate filters src (a whole window at 16 kHz: an even length, at most
// maxWindow) into dst
// (half as long) and returns dst: output j is the filter centred on input
// sample 2j+1-(halfbandTaps-1)/2 of the stream, so n input samples in all
// give exactly n/2 outputs.
func (d *decimator) decimate(dst, src []int16) []int16 {
	const hist = halfbandTaps - 1
	n := len(src)
	buf := d.buf[:hist+n]
	for i, v := range src {
		buf[hist+i] = float32(v)
	}
	dst = dst[:n/2]
	h := &halfband
	for j := range dst {
		// The filter's taps span buf[2j+1 : 2j+1+halfbandTaps], centred
		// at 2j+1+hist/2; written out, with the window as an array, the
		// loop has no bounds checks and no inner loop.
		w := (*[halfbandTaps]float32)(buf[2*j+1:])
		acc := halfbandCentre*w[17] +
			h[0]*(w[16]+w[18]) + h[1]*(w[14]+w[20]) + h[2]*(w[12]+w[22]) +
			h[3]*(w[10]+w[24]) + h[4]*(w[8]+w[26]) + h[5]*(w[6]+w[28]) +
			h[6]*(w[4]+w[30]) + h[7]*(w[2]+w[32]) + h[8]*(w[0]+w[34])
		// Round half away from zero, then clamp.
		if acc >= 0 {
			acc += 0.5
		} else {
			acc -= 0.5
		}
		dst[j] = int16(max(-32768, min(32767, int32(acc))))
	}
	copy(d.buf[:hist], buf[n:])
	return dst
}

// Reset forgets the history (a new call's silence).
func (d *decimator) Reset() { clear(d.buf[:halfbandTaps-1]) }
