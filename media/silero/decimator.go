package silero

import (
	"fmt"

	"github.com/brisvox/brisvox/media"
)

// decimatorConfig is the filter that halves 16 kHz windows for the 8 kHz
// model: media's polyphase resampler with a shorter filter than its
// default (60 dB instead of 85, a transition band of 0.4 of the 4 kHz
// Nyquist instead of 0.2: passband to 3.2 kHz, stopband from 4.8 kHz, 40
// taps instead of 112). What folds back from 4-4.8 kHz lands above 3.2
// kHz; the rest is 60 dB down. The speech detector looks at the speech
// band, where the two filters agree. A window costs 42k instructions with
// it, 52k with the default (callgrind on BenchmarkDecimate): 12 % of what
// the 8 kHz model takes per window. Its delay is 1.2 ms, which the
// window's 32 ms steps do not resolve.
var decimatorConfig = media.ResamplerConfig{Attenuation: 60, Transition: 0.4, Block: maxWindow}

// decimator halves one stream's 16 kHz windows to 8 kHz. It keeps the
// filter's history from window to window, so the windows of a stream are
// filtered as one signal.
type decimator struct{ rs *media.Resampler }

func newDecimator() *decimator {
	rs, err := media.NewResampler(Rate16k, Rate8k, decimatorConfig)
	if err != nil {
		// The rates and the configuration are constants (TestDecimator
		// makes one): this cannot happen.
		panic(fmt.Sprintf("silero: the 16 to 8 kHz decimator: %v", err))
	}
	return &decimator{rs: rs}
}

// decimate filters src (a whole window at 16 kHz) into dst (half as long)
// and returns dst: n input samples in all give exactly n/2 outputs, so
// each window of 512 gives 256.
func (d *decimator) decimate(dst, src []int16) []int16 {
	n, _ := d.rs.Process(dst, src)
	return dst[:n]
}

// Reset forgets the history (a new call's silence).
func (d *decimator) Reset() { d.rs.Reset() }
