package opus

import (
	"math"
	"testing"
)

// sine is a tone of freq Hz at amplitude amp (of full scale 32767).
func sine(rate int, freq, amp float64, n int) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(amp * 32767 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return pcm
}

// speechLike is a voiced-speech stand-in that, unlike a steady tone, a
// concealer cannot predict from the past: a harmonic series (to 3.4 kHz,
// falling 6 dB per octave) whose pitch glides between 110 and 230 Hz and
// changes direction every 90 ms, under a 4 Hz syllable envelope.
func speechLike(rate, n int) []int16 {
	pcm := make([]int16, n)
	phase := 0.0
	for i := range pcm {
		t := float64(i) / float64(rate)
		f0 := 170 + 60*math.Sin(2*math.Pi*t/0.18)
		phase += 2 * math.Pi * f0 / float64(rate)
		v := 0.0
		for h := 1; float64(h)*f0 < 3400; h++ {
			v += math.Sin(float64(h)*phase) / float64(h)
		}
		env := 0.35 + 0.3*math.Sin(2*math.Pi*4*t)
		pcm[i] = int16(8000 * env * v)
	}
	return pcm
}

// encodeAll encodes pcm frame by frame (its length a whole number of frames).
func encodeAll(t testing.TB, enc *Encoder, pcm []int16) [][]byte {
	t.Helper()
	fs := enc.FrameSamples()
	var packets [][]byte
	buf := make([]byte, MaxPacketBytes)
	for off := 0; off+fs <= len(pcm); off += fs {
		n, err := enc.Encode(pcm[off:off+fs], buf)
		if err != nil {
			t.Fatalf("encode frame %d: %v", off/fs, err)
		}
		packets = append(packets, append([]byte(nil), buf[:n]...))
	}
	return packets
}

// decodeAll decodes packets in order; lost[k] replaces packet k by a
// Conceal, or by DecodeFEC of packet k+1 when useFEC.
func decodeAll(t testing.TB, dec *Decoder, packets [][]byte, lost map[int]bool, useFEC bool) []int16 {
	t.Helper()
	var out []int16
	pcm := make([]int16, 5760)
	for k, pkt := range packets {
		var n int
		var err error
		switch {
		case lost[k] && useFEC && k+1 < len(packets):
			n = dec.LostFrameSamples()
			err = dec.DecodeFEC(packets[k+1], pcm)
		case lost[k]:
			n, err = dec.Conceal(pcm)
		default:
			n, err = dec.Decode(pkt, pcm)
		}
		if err != nil {
			t.Fatalf("frame %d (lost %v, fec %v): %v", k, lost[k], useFEC, err)
		}
		out = append(out, pcm[:n]...)
	}
	return out
}

// bestLag is the delay in [0, maxLag] at which got best matches ref (the
// codec's algorithmic delay), by normalized cross-correlation.
func bestLag(ref, got []int16, maxLag int) (lag int, corr float64) {
	corr = math.Inf(-1)
	for l := 0; l <= maxLag; l++ {
		if c := correlation(ref, got, l); c > corr {
			lag, corr = l, c
		}
	}
	return lag, corr
}

// correlation is the normalized cross-correlation of ref[i] and got[i+lag].
func correlation(ref, got []int16, lag int) float64 {
	var xy, xx, yy float64
	for i := 0; i+lag < len(got) && i < len(ref); i++ {
		x, y := float64(ref[i]), float64(got[i+lag])
		xy += x * y
		xx += x * x
		yy += y * y
	}
	if xx == 0 || yy == 0 {
		return 0
	}
	return xy / math.Sqrt(xx*yy)
}

// errorEnergy is the energy of got[from+lag:to+lag] - ref[from:to].
func errorEnergy(ref, got []int16, lag, from, to int) float64 {
	var e float64
	for i := from; i < to; i++ {
		d := float64(got[i+lag]) - float64(ref[i])
		e += d * d
	}
	return e
}

// energy is the energy of pcm[from:to].
func energy(pcm []int16, from, to int) float64 {
	var e float64
	for _, v := range pcm[from:to] {
		e += float64(v) * float64(v)
	}
	return e
}

// snrDB is the signal-to-noise ratio of got against ref delayed by lag,
// over ref[from:to].
func snrDB(ref, got []int16, lag, from, to int) float64 {
	return 10 * math.Log10(energy(ref, from, to)/errorEnergy(ref, got, lag, from, to))
}
