package media

import (
	"fmt"
	"math"
)

// Resampler design
//
// A rate change from F to T is done as: upsample by L (insert L-1 zeros),
// lowpass at the intermediate rate L·F, downsample by M, where L/M = T/F in
// lowest terms. The lowpass is a windowed sinc:
//
//   - cutoff (the -6 dB point) at the lower Nyquist, min(F, T)/2;
//   - transition band 0.2 of that Nyquist, centred on it (default): the
//     passband ends at 0.9 and the stopband starts at 1.1 times the lower
//     Nyquist (3.6/4.4 kHz at 8 kHz, 7.2/8.8 kHz at 16 kHz, 10.8/13.2 kHz at
//     24 kHz). Centring is the usual compromise: going down, what aliases
//     from the transition band lands in the transition band; going up, the
//     images of the passband land in the stopband;
//   - Kaiser window, beta = 0.1102·(A − 8.7) for the design attenuation A
//     (85 dB by default: beta 8.41), length from Kaiser's formula
//     N = (A − 7.95)/(2.285·Δω) + 1, rounded up to a multiple of 8·L so that
//     every phase has the same number of taps K, a multiple of 8 (the
//     vector dot product's width);
//   - the taps are computed in float64 at construction, scaled to a DC gain
//     of L (which the zero stuffing takes back), and stored as float32,
//     split into L polyphase branches of K taps each. Each output sample
//     costs one K-tap dot product in float32 (samples are exact in float32;
//     the rounding error of the sums, about 1e-7 relative, is far below the
//     int16 output's), rounded to nearest and clamped to int16. On amd64
//     with AVX2 and FMA the dot product is vectorised (resample_dot_amd64.s).
//
// Only the outputs that are kept are computed: output j needs intermediate
// sample j·M, i.e. branch (j·M mod L) applied to the K input samples ending
// at floor(j·M/L).
//
// The filters with the defaults (K taps per phase, N = K·L taps in all,
// group delay (N−1)/2 intermediate samples = (N−1)/(2L) input samples =
// (N−1)/(2M) output samples, in ms; stopband attenuation achieved over the
// whole stopband and passband ripple, both measured on the float64
// prototype by TestResamplerFilterDesign):
//
//	pair         L  M    K    N  delay out  delay ms  stopband  ripple
//	8k→16k       2  1   56  112     55.50     3.47     85.1 dB  0.0006 dB
//	8k→24k       3  1   56  168     83.50     3.48     85.1 dB  0.0006 dB
//	8k→48k       6  1   56  336    167.50     3.49     85.1 dB  0.0006 dB
//	16k→8k       1  2  112  112     27.75     3.47     85.1 dB  0.0006 dB
//	16k→24k      3  2   56  168     41.75     1.74     85.1 dB  0.0006 dB
//	16k→48k      3  1   56  168     83.50     1.74     85.1 dB  0.0006 dB
//	24k→8k       1  3  168  168     27.83     3.48     85.1 dB  0.0006 dB
//	24k→16k      2  3   88  176     29.17     1.82     85.8 dB  0.0005 dB
//	24k→48k      2  1   56  112     55.50     1.16     85.1 dB  0.0006 dB
//	48k→8k       1  6  328  328     27.25     3.41     84.8 dB  0.0005 dB
//	48k→16k      1  3  168  168     27.83     1.74     85.1 dB  0.0006 dB
//	48k→24k      1  2  112  112     27.75     1.16     85.1 dB  0.0006 dB
//
// The taps per output, K, grow with F/min(F, T): a 20 ms frame costs about
// 1.1·max(F, T) multiply-adds, ~53k for any pair with 48 kHz.

// The sample rates a Resampler supports.
var resampleRates = [...]int{8000, 16000, 24000, 48000}

// Defaults of ResamplerConfig.
const (
	// DefaultResampleAttenuation is the design stopband attenuation in dB.
	DefaultResampleAttenuation = 85.0
	// DefaultResampleTransition is the transition band as a fraction of the
	// lower Nyquist frequency, centred on it.
	DefaultResampleTransition = 0.2
	// DefaultResampleBlock is how many input samples are staged at a time;
	// longer inputs are processed in blocks of this size, so the work
	// buffer never grows (960 is a 20 ms frame at 48 kHz).
	DefaultResampleBlock = 960
)

// ResamplerConfig tunes the filter of a Resampler. Zero values take the
// defaults, which meet an 80 dB anti-alias/anti-image requirement with a
// margin for the int16 output.
type ResamplerConfig struct {
	// Attenuation is the design stopband attenuation in dB, in [40, 140].
	// More costs taps: about 1.2% more per dB.
	Attenuation float64
	// Transition is the width of the transition band as a fraction of the
	// lower Nyquist frequency, in [0.02, 0.5]. Narrower keeps more of the
	// passband and costs taps in inverse proportion (the floor keeps the
	// filter at most ten times the default's length).
	Transition float64
	// Block is how many input samples are staged at a time (a work buffer
	// of Block plus the filter history floats). It only trades memory for
	// per-call overhead; the output does not depend on it.
	Block int
}

func (c ResamplerConfig) withDefaults() ResamplerConfig {
	if c.Attenuation == 0 {
		c.Attenuation = DefaultResampleAttenuation
	}
	if c.Transition == 0 {
		c.Transition = DefaultResampleTransition
	}
	if c.Block == 0 {
		c.Block = DefaultResampleBlock
	}
	return c
}

// Validate reports a configuration that cannot work. Zero values are valid
// (they take the defaults).
func (c ResamplerConfig) Validate() error {
	switch {
	case math.IsNaN(c.Attenuation) || c.Attenuation != 0 && (c.Attenuation < 40 || c.Attenuation > 140):
		return fmt.Errorf("%w: resampler attenuation %v dB not in [40, 140]", ErrInvalidConfig, c.Attenuation)
	case math.IsNaN(c.Transition) || c.Transition != 0 && (c.Transition < 0.02 || c.Transition > 0.5):
		return fmt.Errorf("%w: resampler transition %v not in [0.02, 0.5]", ErrInvalidConfig, c.Transition)
	case c.Block < 0 || c.Block > 1<<20:
		return fmt.Errorf("%w: resampler block %d not in [1, 1048576]", ErrInvalidConfig, c.Block)
	}
	return nil
}

// Resampler converts a stream of PCM16 samples from one rate to another
// with a polyphase FIR filter (see the design notes above). It keeps the
// filter history across calls, so a stream cut into chunks of any sizes
// gives the same output, sample for sample, as the stream in one piece. It
// is not safe for concurrent use: one stage of a call owns it.
type Resampler struct {
	from, to int
	l, m     int // up and down factors, T/F = L/M in lowest terms
	k        int // taps per phase

	// phases holds the L branches, K taps each, branch p at [p·K, (p+1)·K),
	// reversed so that a branch is a forward dot product with the K input
	// samples ending at the newest one it needs.
	phases []float32
	// step[p] is how the phase and the input index move from one output to
	// the next: from phase p, the next output uses phase step[p].next,
	// step[p].adv input samples later.
	step []phaseStep

	// buf holds K-1 samples of history followed by the staged block.
	buf   []float32
	block int

	// phase and pos locate the next output: branch phase applied to the K
	// samples ending at staged input pos (pos may be at or past the end of
	// the staged input: then the output waits for more input). Between
	// calls pos is relative to the next input sample, pos·L+phase < M.
	phase, pos int

	copyOnly bool
	delay    float64
	taps     int
}

type phaseStep struct{ adv, next int }

// NewResampler makes a resampler from rate from to rate to, both in Hz and
// among 8000, 16000, 24000, 48000. Equal rates make a copier. It fails with
// ErrUnsupportedRate for another rate and ErrInvalidConfig when cfg does
// not validate. The filter is designed here; Process does not allocate.
func NewResampler(from, to int, cfg ResamplerConfig) (*Resampler, error) {
	if !supportedRate(from) {
		return nil, fmt.Errorf("%w: from %d Hz (want 8000, 16000, 24000 or 48000)", ErrUnsupportedRate, from)
	}
	if !supportedRate(to) {
		return nil, fmt.Errorf("%w: to %d Hz (want 8000, 16000, 24000 or 48000)", ErrUnsupportedRate, to)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := gcd(from, to)
	r := &Resampler{from: from, to: to, l: to / g, m: from / g, block: cfg.Block}
	if from == to {
		r.copyOnly = true
		return r, nil
	}
	proto := designLowpass(r.l, from, min(from, to), cfg.Attenuation, cfg.Transition)
	r.taps = len(proto)
	r.k = len(proto) / r.l
	r.delay = float64(len(proto)-1) / 2 / float64(r.m)
	r.phases = make([]float32, len(proto))
	for p := range r.l {
		branch := r.phases[p*r.k : (p+1)*r.k]
		for j := range r.k {
			// Tap j of the reversed branch multiplies the input sample
			// K-1-j before the newest, i.e. prototype tap p + (K-1-j)·L.
			branch[j] = float32(proto[p+(r.k-1-j)*r.l])
		}
	}
	r.step = make([]phaseStep, r.l)
	for p := range r.l {
		r.step[p] = phaseStep{adv: (p + r.m) / r.l, next: (p + r.m) % r.l}
	}
	r.buf = make([]float32, r.k-1+r.block)
	return r, nil
}

func supportedRate(hz int) bool {
	for _, r := range resampleRates {
		if hz == r {
			return true
		}
	}
	return false
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// designLowpass returns the prototype filter at the intermediate rate
// l·from: a Kaiser-windowed sinc with its cutoff at lowRate/2, a transition
// band of transition·lowRate/2 centred there, the given attenuation in dB,
// scaled to a DC gain of l, its length a multiple of 4·l.
func designLowpass(l, from, lowRate int, atten, transition float64) []float64 {
	fi := float64(l * from)
	nyq := float64(lowRate) / 2
	dw := 2 * math.Pi * transition * nyq / fi // transition width, rad/sample
	n := int(math.Ceil((atten-7.95)/(2.285*dw))) + 1
	unit := 8 * l
	n = (n + unit - 1) / unit * unit
	beta := kaiserBeta(atten)
	fc := nyq / fi // cutoff, cycles/sample
	h := make([]float64, n)
	mid := float64(n-1) / 2
	i0b := besselI0(beta)
	var sum float64
	for i := range h {
		t := float64(i) - mid
		var s float64
		if t == 0 {
			s = 2 * fc
		} else {
			s = math.Sin(2*math.Pi*fc*t) / (math.Pi * t)
		}
		r := 2*float64(i)/float64(n-1) - 1
		w := besselI0(beta*math.Sqrt(max(0, 1-r*r))) / i0b
		h[i] = s * w
		sum += h[i]
	}
	for i := range h {
		h[i] *= float64(l) / sum
	}
	return h
}

// kaiserBeta is Kaiser's empirical window parameter for an attenuation in dB.
func kaiserBeta(atten float64) float64 {
	switch {
	case atten > 50:
		return 0.1102 * (atten - 8.7)
	case atten >= 21:
		return 0.5842*math.Pow(atten-21, 0.4) + 0.07886*(atten-21)
	}
	return 0
}

// besselI0 is the modified Bessel function of the first kind, order 0, by
// its power series (converges fast for the arguments of a window, < 20).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 500; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < 1e-17*sum {
			break
		}
	}
	return sum
}

// From is the input rate in Hz.
func (r *Resampler) From() int { return r.from }

// To is the output rate in Hz.
func (r *Resampler) To() int { return r.to }

// Delay is the group delay of the filter in output samples: a feature of the
// input appears this much later in the output (0 for a copier). It is
// (N-1)/(2M) for N prototype taps and down factor M, a multiple of 1/(2M).
func (r *Resampler) Delay() float64 { return r.delay }

// TapsPerPhase is the number of taps of each polyphase branch, the
// multiply-adds per output sample (0 for a copier).
func (r *Resampler) TapsPerPhase() int { return r.k }

// MaxOutLen is an upper bound on the output of Process for nIn input
// samples in any state: ceil(nIn·T/F). A dst of this length always takes
// all the input.
func (r *Resampler) MaxOutLen(nIn int) int {
	if nIn <= 0 {
		return 0
	}
	return (nIn*r.l + r.m - 1) / r.m
}

// OutLen is exactly how many samples the next Process makes from nIn input
// samples, given the state: over a stream, n input samples in total give
// ceil(n·T/F) output samples, however they are chunked.
func (r *Resampler) OutLen(nIn int) int {
	if nIn <= 0 {
		return 0
	}
	if r.copyOnly {
		return nIn
	}
	// Outputs j >= 0 with (pos·L + phase) + j·M < nIn·L.
	t := r.pos*r.l + r.phase
	if t >= nIn*r.l {
		return 0
	}
	return (nIn*r.l - t + r.m - 1) / r.m
}

// Process resamples src into dst and returns how many output samples it
// wrote and how many input samples it consumed. With len(dst) >=
// OutLen(len(src)) (MaxOutLen(len(src)) is always enough) it consumes all
// of src. With a shorter dst it consumes src only up to the last input
// sample whose outputs all fit, writes those outputs, and leaves the rest
// of src for the caller to pass again: nothing is lost and nothing panics.
// A dst of at least MaxOutLen(1) = ceil(T/F) samples always consumes at
// least one input sample; a shorter one may consume none (going up, one
// input sample makes up to T/F outputs). Empty src gives (0, 0). It does
// not allocate.
func (r *Resampler) Process(dst, src []int16) (nOut, nIn int) {
	if r.copyOnly {
		n := copy(dst, src)
		return n, n
	}
	// The (len(dst)+1)-th output needs input (t + len(dst)·M)/L: consume
	// the inputs before it, at most.
	t := r.pos*r.l + r.phase
	fit := (t + len(dst)*r.m) / r.l
	if fit < len(src) {
		src = src[:fit]
	}
	nIn = len(src)
	hist := r.k - 1
	for len(src) > 0 {
		c := min(len(src), r.block)
		staged := r.buf[hist : hist+c]
		for i, s := range src[:c] {
			staged[i] = float32(s)
		}
		nOut += r.run(dst[nOut:], c)
		copy(r.buf[:hist], r.buf[c:c+hist])
		src = src[c:]
	}
	return nOut, nIn
}

// run makes every output whose newest input is among the c staged samples
// and moves pos to be relative to the next block.
func (r *Resampler) run(dst []int16, c int) int {
	k := r.k
	n := 0
	phase, pos := r.phase, r.pos
	for pos < c {
		v := dot(r.phases[phase*k:(phase+1)*k], r.buf[pos:pos+k])
		dst[n] = clampRound(v)
		n++
		st := r.step[phase]
		phase, pos = st.next, pos+st.adv
	}
	r.phase, r.pos = phase, pos-c
	return n
}

// clampRound rounds to nearest (half away from zero) and saturates to int16.
func clampRound(v float32) int16 {
	switch {
	case v >= 32766.5:
		return math.MaxInt16
	case v <= -32767.5:
		return math.MinInt16
	case v >= 0:
		return int16(v + 0.5)
	}
	return int16(v - 0.5)
}

// Reset forgets the history, as for a new stream: the next output is the
// first of a stream again.
func (r *Resampler) Reset() {
	clear(r.buf)
	r.phase, r.pos = 0, 0
}
