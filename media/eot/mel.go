package eot

import (
	"fmt"
	"math"
)

// The feature layout of Smart Turn v3: Whisper's log-mel spectrogram with
// the window cut from 30 s to 8 s.
const (
	// SampleRate is the only rate the models take.
	SampleRate = 16000
	// WindowSamples is the audio the model sees: the last 8 s.
	WindowSamples = 8 * SampleRate
	// NumMels is the number of mel bands (rows of the feature matrix).
	NumMels = 80
	// NumFrames is the number of 10 ms frames (columns).
	NumFrames = WindowSamples / hopSize
	// FeatureLen is the length of one feature matrix, NumMels*NumFrames,
	// row-major [mel][frame] as the model input [1, 80, 800].
	FeatureLen = NumMels * NumFrames

	fftSize = 400 // 25 ms window
	hopSize = 160 // 10 ms hop
	numBins = fftSize/2 + 1

	melFloor   = 1e-10 // power floor before log10 (Whisper)
	normEps    = 1e-7  // variance epsilon of the waveform normalisation
	dynRangeDB = 8.0   // log10 units kept below the maximum (80 dB)
)

// FeatureConfig configures a Features extractor. The zero value is Smart
// Turn's extractor.
type FeatureConfig struct {
	// RawWaveform skips the zero-mean, unit-variance normalisation of the
	// 8 s window that Smart Turn applies before the spectrogram
	// (do_normalize=True in its feature extractor), giving plain Whisper
	// features of the int16 audio scaled to [-1, 1).
	RawWaveform bool
}

// Validate reports a bad configuration; every FeatureConfig is valid today.
func (c FeatureConfig) Validate() error { return nil }

// melFilter is one triangular filter, stored sparsely: the weights of the
// FFT bins first..first+len(weights)-1.
type melFilter struct {
	first   int
	weights []float64
}

// Features computes Whisper-style log-mel features of the last 8 s of 16 kHz
// audio, as Smart Turn's feature extractor does:
//
//   - int16 samples are scaled to [-1, 1); audio shorter than 8 s is padded
//     with zeros at the start (the speech stays at the end, where the model
//     looks for the end of the turn), longer audio keeps its last 8 s;
//   - unless RawWaveform, the 128000-sample window is normalised to zero
//     mean and unit variance (variance + 1e-7), padding included;
//   - a centred STFT: reflect padding of 200 samples at both ends, a
//     periodic Hann window of 400 samples (25 ms), hop 160 (10 ms), 801
//     frames of which the last is dropped, giving 800;
//   - the power spectrum (201 bins) projected on 80 mel filters with the
//     Slaney mel scale and Slaney area normalisation, 0 to 8000 Hz (the
//     filters of librosa.filters.mel(sr=16000, n_fft=400, n_mels=80));
//   - log10 with a floor of 1e-10, clamped to at least the maximum minus 8,
//     then (x+4)/4.
//
// The transform is a real FFT of length 400 done as one complex FFT of
// length 200 (radices 4, 2, 5, 5). All buffers are allocated by NewFeatures:
// Compute allocates nothing. A Features is not safe for concurrent use.
type Features struct {
	cfg     FeatureConfig
	window  [fftSize]float64
	filters [NumMels]melFilter
	signal  []float64 // the 8 s window, float, normalised
	frame   [fftSize]float64
	power   [numBins]float64
	fft     *rfftPower
}

// NewFeatures builds an extractor: the window, the filter bank and the FFT
// plan are computed here once.
func NewFeatures(cfg FeatureConfig) (*Features, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := &Features{
		cfg:    cfg,
		signal: make([]float64, WindowSamples),
		fft:    newRFFTPower(fftSize),
	}
	for n := range f.window {
		f.window[n] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/fftSize)
	}
	f.filters = slaneyFilters()
	return f, nil
}

// slaneyFilters builds the 80 triangular filters: edges equally spaced on the
// Slaney mel scale from 0 Hz to the Nyquist frequency, each triangle scaled
// by 2/(upper-lower) Hz so that every filter has the same area.
func slaneyFilters() [NumMels]melFilter {
	var edges [NumMels + 2]float64
	top := hzToMelSlaney(SampleRate / 2)
	for i := range edges {
		edges[i] = melToHzSlaney(top * float64(i) / float64(NumMels+1))
	}
	var out [NumMels]melFilter
	for m := range out {
		lo, mid, hi := edges[m], edges[m+1], edges[m+2]
		norm := 2 / (hi - lo)
		first, last := -1, -1
		var w [numBins]float64
		for k := range numBins {
			fk := float64(k) * SampleRate / fftSize
			v := math.Max(0, math.Min((fk-lo)/(mid-lo), (hi-fk)/(hi-mid)))
			if v > 0 {
				if first < 0 {
					first = k
				}
				last = k
			}
			w[k] = v * norm
		}
		if first < 0 { // cannot happen at these sizes; keep the filter empty
			continue
		}
		out[m] = melFilter{first: first, weights: append([]float64(nil), w[first:last+1]...)}
	}
	return out
}

// hzToMelSlaney is the Slaney mel scale: linear (3 mels per 200 Hz) below
// 1 kHz, logarithmic above.
func hzToMelSlaney(hz float64) float64 {
	const fsp, minLogHz, minLogMel = 200.0 / 3, 1000.0, 15.0
	if hz < minLogHz {
		return hz / fsp
	}
	return minLogMel + math.Log(hz/minLogHz)*27/math.Log(6.4)
}

func melToHzSlaney(mel float64) float64 {
	const fsp, minLogHz, minLogMel = 200.0 / 3, 1000.0, 15.0
	if mel < minLogMel {
		return mel * fsp
	}
	return minLogHz * math.Exp((mel-minLogMel)*math.Log(6.4)/27)
}

// Compute writes the features of audio (16 kHz; see Features) to dst, which
// must have length FeatureLen; the layout is row-major [mel][frame]. Empty
// audio is 8 s of silence.
func (f *Features) Compute(dst []float32, audio []int16) error {
	if len(dst) != FeatureLen {
		return fmt.Errorf("%w: %d, want %d (%d mels x %d frames)", ErrBadBuffer, len(dst), FeatureLen, NumMels, NumFrames)
	}
	if len(audio) > WindowSamples {
		audio = audio[len(audio)-WindowSamples:]
	}
	pad := WindowSamples - len(audio)
	clear(f.signal[:pad])
	for i, s := range audio {
		f.signal[pad+i] = float64(s) / 32768
	}
	if !f.cfg.RawWaveform {
		normalize(f.signal)
	}

	maxLog := math.Inf(-1)
	for t := range NumFrames {
		f.loadFrame(t)
		f.fft.power(f.power[:], f.frame[:])
		for m := range f.filters {
			flt := &f.filters[m]
			pw := f.power[flt.first : flt.first+len(flt.weights)]
			var e float64
			for k, w := range flt.weights {
				e += w * pw[k]
			}
			v := math.Log10(math.Max(e, melFloor))
			maxLog = math.Max(maxLog, v)
			dst[m*NumFrames+t] = float32(v)
		}
	}
	lowest := float32(maxLog - dynRangeDB)
	for i, v := range dst {
		dst[i] = (max(v, lowest) + 4) / 4
	}
	return nil
}

// loadFrame copies the windowed frame t of the centred STFT into f.frame:
// samples t*hop-200 .. t*hop+199, reflected at both ends of the signal.
func (f *Features) loadFrame(t int) {
	start := t*hopSize - fftSize/2
	n := len(f.signal)
	if start >= 0 && start+fftSize <= n {
		for j, s := range f.signal[start : start+fftSize] {
			f.frame[j] = s * f.window[j]
		}
		return
	}
	for j := range fftSize {
		i := start + j
		switch {
		case i < 0:
			i = -i
		case i >= n:
			i = 2*(n-1) - i
		}
		f.frame[j] = f.signal[i] * f.window[j]
	}
}

// normalize scales x to zero mean and unit variance (population variance
// plus normEps, as the reference extractor).
func normalize(x []float64) {
	var sum float64
	for _, v := range x {
		sum += v
	}
	mean := sum / float64(len(x))
	var ss float64
	for _, v := range x {
		d := v - mean
		ss += d * d
	}
	scale := 1 / math.Sqrt(ss/float64(len(x))+normEps)
	for i, v := range x {
		x[i] = (v - mean) * scale
	}
}
