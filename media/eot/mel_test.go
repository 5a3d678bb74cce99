package eot

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// The reference below shares no code with mel.go and fft.go: the mel scale's
// inverse is found by bisection, the filters are written as explicit
// triangles, the spectrum is a direct DFT and the padding is built as an
// array the way numpy's reflect mode does.

// refMel is the Slaney mel scale.
func refMel(hz float64) float64 {
	if hz < 1000 {
		return 3 * hz / 200
	}
	return 15 + 27*math.Log(hz/1000)/math.Log(6.4)
}

// refHz inverts refMel by bisection.
func refHz(mel float64) float64 {
	lo, hi := 0.0, 20000.0
	for range 200 {
		mid := (lo + hi) / 2
		if refMel(mid) < mel {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// refFilters returns the 80x201 Slaney filter bank, dense.
func refFilters() [][]float64 {
	const bands, bins = 80, 201
	melTop := refMel(8000)
	edge := func(i int) float64 { return refHz(melTop * float64(i) / (bands + 1)) }
	out := make([][]float64, bands)
	for m := range out {
		lo, mid, hi := edge(m), edge(m+1), edge(m+2)
		out[m] = make([]float64, bins)
		for k := range bins {
			f := 8000 * float64(k) / (bins - 1)
			var tri float64
			switch {
			case f > lo && f <= mid:
				tri = (f - lo) / (mid - lo)
			case f > mid && f < hi:
				tri = (hi - f) / (hi - mid)
			}
			out[m][k] = tri * 2 / (hi - lo)
		}
	}
	return out
}

// refFeatures computes the features of audio the slow way.
func refFeatures(audio []int16, normalise bool) []float64 {
	const total, nfft, hop, bands, frames = 128000, 400, 160, 80, 800
	if len(audio) > total {
		audio = audio[len(audio)-total:]
	}
	x := make([]float64, total)
	for i, s := range audio {
		x[total-len(audio)+i] = float64(s) / 32768
	}
	if normalise {
		var mean, variance float64
		for _, v := range x {
			mean += v / total
		}
		for _, v := range x {
			variance += (v - mean) * (v - mean) / total
		}
		for i := range x {
			x[i] = (x[i] - mean) / math.Sqrt(variance+1e-7)
		}
	}
	// numpy reflect padding: x[200], ..., x[1], x, x[n-2], ..., x[n-201].
	padded := make([]float64, 0, total+nfft)
	for i := nfft / 2; i >= 1; i-- {
		padded = append(padded, x[i])
	}
	padded = append(padded, x...)
	for i := total - 2; i >= total-1-nfft/2; i-- {
		padded = append(padded, x[i])
	}
	cosT, sinT := make([]float64, nfft), make([]float64, nfft)
	for i := range nfft {
		cosT[i] = math.Cos(2 * math.Pi * float64(i) / nfft)
		sinT[i] = math.Sin(2 * math.Pi * float64(i) / nfft)
	}
	hann := make([]float64, nfft)
	for i := range hann {
		hann[i] = math.Pow(math.Sin(math.Pi*float64(i)/nfft), 2) // = 0.5-0.5cos(2 pi i/N)
	}
	filters := refFilters()
	logs := make([]float64, bands*frames)
	top := math.Inf(-1)
	frame := make([]float64, nfft)
	power := make([]float64, nfft/2+1)
	for t := range frames {
		for i := range frame {
			frame[i] = padded[t*hop+i] * hann[i]
		}
		for k := range power {
			var re, im float64
			for i, v := range frame {
				re += v * cosT[(k*i)%nfft]
				im -= v * sinT[(k*i)%nfft]
			}
			power[k] = re*re + im*im
		}
		for m := range bands {
			var e float64
			for k, w := range filters[m] {
				e += w * power[k]
			}
			l := math.Log10(math.Max(e, 1e-10))
			logs[m*frames+t] = l
			top = math.Max(top, l)
		}
	}
	for i, l := range logs {
		logs[i] = (math.Max(l, top-8) + 4) / 4
	}
	return logs
}

func randomAudio(n int, seed uint64, amp float64) []int16 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]int16, n)
	for i := range out {
		// Noise plus a sweep, so that every band carries energy.
		v := amp * (0.5*r.NormFloat64()*0.3 + 0.5*math.Sin(float64(i)*float64(i)*3e-6))
		out[i] = int16(max(-32768, min(32767, v*32767)))
	}
	return out
}

// TestFeaturesMatchReference compares Compute with the independent reference
// on random signals, both ways of padding and both normalisations.
// Mutations caught (each seen failing): reflect index off by one at the end
// (2*(n-1)-i -> 2*n-1-i), padding at the end instead of the start, keeping
// the first 8 s of long audio, a symmetric instead of periodic Hann window,
// the HTK formula below 1 kHz, dropping the area normalisation, log clamp
// at max-80.
func TestFeaturesMatchReference(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the reference DFT takes a while")
	}
	cases := []struct {
		name string
		n    int
		raw  bool
	}{
		{"short_300ms_padded", 4800, false},
		{"exactly_8s", WindowSamples, false},
		{"long_9s_keeps_last_8s", WindowSamples + 16000, false},
		{"short_raw_waveform", 4800, true},
		{"long_raw_waveform", WindowSamples + 8000, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if raceEnabled && tc.n > 5000 {
				t.Skip("race: the long reference runs take minutes")
			}
			audio := randomAudio(tc.n, uint64(i+1), 0.4)
			f, err := NewFeatures(FeatureConfig{RawWaveform: tc.raw})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, FeatureLen)
			if err := f.Compute(got, audio); err != nil {
				t.Fatal(err)
			}
			want := refFeatures(audio, !tc.raw)
			var worst float64
			at := 0
			for j := range want {
				if d := math.Abs(float64(got[j]) - want[j]); d > worst || math.IsNaN(d) {
					worst, at = d, j
				}
			}
			if !(worst <= 1e-4) {
				t.Fatalf("max |got-want| = %g at mel %d frame %d (got %v, want %v)",
					worst, at/NumFrames, at%NumFrames, got[at], want[at])
			}
			t.Logf("max |got-want| = %.3g", worst)
		})
	}
}

// TestFilterBankKnownValue pins the first filter's weight at 40 Hz to the
// value librosa.filters.mel(sr=16000, n_fft=400, n_mels=80)[0, 1] has
// (0.0248626: Whisper's mel_filters.npz), and checks the whole bank against
// the reference. Mutations caught: the HTK formula below 1 kHz, no area
// normalisation, edges spaced linearly in Hz.
func TestFilterBankKnownValue(t *testing.T) {
	bank := slaneyFilters()
	ref := refFilters()
	dense := func(m, k int) float64 {
		f := bank[m]
		if k < f.first || k >= f.first+len(f.weights) {
			return 0
		}
		return f.weights[k-f.first]
	}
	if got := dense(0, 1); math.Abs(got-0.0248626) > 1e-6 {
		t.Fatalf("filter 0 at bin 1 = %.7f, want 0.0248626", got)
	}
	for m := range NumMels {
		for k := range numBins {
			if d := math.Abs(dense(m, k) - ref[m][k]); d > 1e-9 {
				t.Fatalf("filter %d bin %d: %g, reference %g", m, k, dense(m, k), ref[m][k])
			}
		}
	}
}

// TestFeaturesSilenceIsFloor: 8 s of zeros (or no audio at all) has power 0
// everywhere, so every value is log10(1e-10) = -10 scaled: (-10+4)/4 = -1.5.
// Mutations caught: a missing floor (log10(0) = -Inf), the clamp taken as
// max+8, a wrong (x+4)/4 scaling, normalising silence to NaN (no epsilon).
func TestFeaturesSilenceIsFloor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		audio []int16
		raw   bool
	}{
		{"empty", nil, false},
		{"zeros_2s", make([]int16, 32000), false},
		{"zeros_raw", make([]int16, 32000), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFeatures(FeatureConfig{RawWaveform: tc.raw})
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, FeatureLen)
			if err := f.Compute(dst, tc.audio); err != nil {
				t.Fatal(err)
			}
			for i, v := range dst {
				if v != -1.5 {
					t.Fatalf("value %d (mel %d frame %d) = %v, want -1.5", i, i/NumFrames, i%NumFrames, v)
				}
			}
		})
	}
}

// TestFeaturesToneBand: a 1 kHz tone lands in mel band 26, whose filter
// peaks at 1005 Hz (band 25 peaks at 968 Hz, band 27 at 1043 Hz), and bands
// three or more away are at least 20 dB (2 log10 units) lower, in every frame
// well inside the signal. The features must also be the same in every such
// frame (a steady tone). Mutations caught: bins mapped at sr/n_fft*2 (tone
// at band ~40), mel and frame indices swapped in the output layout.
func TestFeaturesToneBand(t *testing.T) {
	audio := make([]int16, WindowSamples)
	for i := range audio {
		audio[i] = int16(10000 * math.Sin(2*math.Pi*1000*float64(i)/SampleRate))
	}
	f, err := NewFeatures(FeatureConfig{})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, FeatureLen)
	if err := f.Compute(dst, audio); err != nil {
		t.Fatal(err)
	}
	for _, frame := range []int{10, 400, 790} {
		best := 0
		for m := range NumMels {
			if dst[m*NumFrames+frame] > dst[best*NumFrames+frame] {
				best = m
			}
		}
		if best != 26 {
			t.Fatalf("frame %d: loudest band %d, want 26", frame, best)
		}
		peak := dst[26*NumFrames+frame]
		for m := range NumMels {
			if (m <= 23 || m >= 29) && peak-dst[m*NumFrames+frame] < 0.5 { // 0.5 scaled = 2 log10 units
				t.Fatalf("frame %d: band %d at %v, within 20 dB of the peak %v", frame, m, dst[m*NumFrames+frame], peak)
			}
			if d := math.Abs(float64(dst[m*NumFrames+frame] - dst[m*NumFrames+400])); d > 1e-3 {
				t.Fatalf("band %d differs between frames %d and 400 by %g", m, frame, d)
			}
		}
	}
}

// TestCFFTMatchesDFT checks the mixed-radix FFT against a direct DFT for
// lengths that use every radix. Mutations caught: a wrong sign in the
// radix-4 butterfly's -i rotation, twiddles W^(q*u) taken as W^u.
func TestCFFTMatchesDFT(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 3, 4, 5, 8, 12, 20, 25, 40, 60, 200, 400} {
		in := make([]complex128, n)
		for i := range in {
			in[i] = complex(r.NormFloat64(), r.NormFloat64())
		}
		out := make([]complex128, n)
		newCFFT(n).transform(out, in)
		for k := range n {
			var want complex128
			for j, v := range in {
				want += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			if cmplx.Abs(out[k]-want) > 1e-9*float64(n) {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, out[k], want)
			}
		}
	}
}

func TestComputeRejectsBadBuffer(t *testing.T) {
	f, err := NewFeatures(FeatureConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, FeatureLen - 1, FeatureLen + 1} {
		if err := f.Compute(make([]float32, n), nil); !errors.Is(err, ErrBadBuffer) {
			t.Fatalf("len %d: err %v, want ErrBadBuffer", n, err)
		}
	}
}

// TestComputeAllocatesNothing pins the zero-allocation promise.
func TestComputeAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("race detector allocates")
	}
	f, err := NewFeatures(FeatureConfig{})
	if err != nil {
		t.Fatal(err)
	}
	audio := randomAudio(WindowSamples, 3, 0.3)
	dst := make([]float32, FeatureLen)
	if n := testing.AllocsPerRun(5, func() { _ = f.Compute(dst, audio) }); n != 0 {
		t.Fatalf("Compute allocates %v times per call", n)
	}
}

// FuzzFeatures: any audio gives finite features in [-1.5, max] without
// panicking.
func FuzzFeatures(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff, 0x7f, 0x00, 0x80})
	f.Add(make([]byte, 4000))
	feat, err := NewFeatures(FeatureConfig{})
	if err != nil {
		f.Fatal(err)
	}
	dst := make([]float32, FeatureLen)
	f.Fuzz(func(t *testing.T, b []byte) {
		audio := make([]int16, len(b)/2)
		for i := range audio {
			audio[i] = int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8)
		}
		if err := feat.Compute(dst, audio); err != nil {
			t.Fatal(err)
		}
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range dst {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite feature %v", v)
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo < -1.5 || hi-lo > 2+1e-5 { // floor -1.5, range at most 8/4
			t.Fatalf("range [%v, %v]", lo, hi)
		}
	})
}

// BenchmarkFeatures8s: features of a full 8 s window.
func BenchmarkFeatures8s(b *testing.B) {
	f, err := NewFeatures(FeatureConfig{})
	if err != nil {
		b.Fatal(err)
	}
	audio := randomAudio(WindowSamples, 5, 0.3)
	dst := make([]float32, FeatureLen)
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Compute(dst, audio); err != nil {
			b.Fatal(err)
		}
	}
}
