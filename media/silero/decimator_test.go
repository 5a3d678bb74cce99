package silero

import (
	"math"
	"testing"

	"github.com/brisvox/brisvox/media"
)

// tone is n samples of a sine of hz at 16 kHz and amplitude amp.
func tone(n int, hz, amp float64) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(math.Round(amp * math.Sin(2*math.Pi*hz*float64(i)/Rate16k)))
	}
	return pcm
}

// rms of pcm in dB relative to full scale.
func rmsDB(pcm []int16) float64 {
	var sum float64
	for _, v := range pcm {
		sum += float64(v) * float64(v)
	}
	return 10 * math.Log10(sum/float64(len(pcm))/(32768*32768))
}

// TestDecimator: window after window, 512 samples at 16 kHz give exactly
// 256 at 8 kHz; a 1 kHz tone keeps its level (within 0.1 dB) and a 6 kHz
// one, which would fold onto 2 kHz, comes out at least 55 dB down; cut
// into windows, the output is the one-piece output. (Mutations seen
// failing: the stride-2 pick without the filter — the 6 kHz tone at
// full level; the history dropped between windows — the windows differ
// from the one-piece output.)
func TestDecimator(t *testing.T) {
	const windows = 40
	in := WindowSize(Rate16k)
	for _, tt := range []struct {
		hz     float64
		minDB  float64
		maxDB  float64
		passes bool
	}{
		{1000, -0.1, 0.1, true},
		{3000, -0.5, 0.1, true},
		{6000, math.Inf(-1), -55, false},
	} {
		src := tone(windows*in, tt.hz, 10000)
		d := newDecimator()
		out := make([]int16, 0, windows*in/2)
		var low [maxWindow / 2]int16
		for w := range windows {
			got := d.decimate(low[:in/2], src[w*in:(w+1)*in])
			if len(got) != in/2 {
				t.Fatalf("%v Hz window %d: %d samples out, want %d", tt.hz, w, len(got), in/2)
			}
			out = append(out, got...)
		}
		// Skip the first window (the filter filling) for the levels.
		gain := rmsDB(out[in/2:]) - rmsDB(src[in:])
		if gain < tt.minDB || gain > tt.maxDB {
			t.Errorf("%v Hz: gain %.2f dB, want in [%v, %v]", tt.hz, gain, tt.minDB, tt.maxDB)
		}
		whole := make([]int16, windows*in/2)
		if n := newDecimator().decimate(whole, src); n == nil || len(n) != len(whole) {
			t.Fatalf("one piece: %d samples", len(n))
		}
		for i := range whole {
			if whole[i] != out[i] {
				t.Fatalf("%v Hz: sample %d is %d in windows, %d in one piece", tt.hz, i, out[i], whole[i])
			}
		}
	}
	d := newDecimator()
	t.Logf("decimator: %d taps, delay %.2f ms", d.rs.TapsPerPhase(), d.rs.Delay()*1000/Rate8k)
}

// TestDecimatorAllocs: decimating a window allocates nothing.
func TestDecimatorAllocs(t *testing.T) {
	d := newDecimator()
	src := tone(WindowSize(Rate16k), 440, 5000)
	var low [maxWindow / 2]int16
	if n := testing.AllocsPerRun(100, func() { d.decimate(low[:], src) }); n != 0 {
		t.Fatalf("%v allocations per window", n)
	}
}

// BenchmarkDecimate is one 16 kHz window halved for the 8 kHz model, with
// the pool's filter and with media's default one for comparison.
func BenchmarkDecimate(b *testing.B) {
	src := tone(WindowSize(Rate16k), 440, 5000)
	for _, c := range []struct {
		name string
		cfg  media.ResamplerConfig
	}{{"pool", decimatorConfig}, {"media-default", media.ResamplerConfig{}}} {
		b.Run(c.name, func(b *testing.B) {
			rs, err := media.NewResampler(Rate16k, Rate8k, c.cfg)
			if err != nil {
				b.Fatal(err)
			}
			d := &decimator{rs: rs}
			var low [maxWindow / 2]int16
			b.ReportAllocs()
			for b.Loop() {
				d.decimate(low[:], src)
			}
		})
	}
}
