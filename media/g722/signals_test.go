package g722_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/brisvox/brisvox/media"
)

// signal is a named test input at 16 kHz.
type signal struct {
	name    string
	samples []int16
}

func (s signal) pcm() []int16 { return s.samples }

// sine is n samples of a sine of freq Hz and amplitude amp at 16 kHz.
func sine(n int, freq, amp float64) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(math.Round(amp * math.Sin(2*math.Pi*freq*float64(i)/16000)))
	}
	return out
}

// noise is n samples of seeded uniform noise in [-amp, amp].
func noise(n int, amp int, seed uint64) []int16 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(r.IntN(2*amp+1) - amp)
	}
	return out
}

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

// syntheticSignals are the inputs both the reference test and the
// round-trip tests use: silence, sines across the band, noise at several
// levels, full scale, and a chirp.
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

func constant(n int, v int16) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// fixtureSignals loads the 16 kHz speech fixtures of .native/fixtures, or
// none when they are absent (they are made by `go tool task setup`).
func fixtureSignals(t *testing.T) []signal {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
	paths, err := filepath.Glob(filepath.Join(dir, ".native", "fixtures", "*.wav"))
	if err != nil {
		t.Fatal(err)
	}
	var out []signal
	for _, p := range paths {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		w, err := media.ReadWAV(f, 0)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if w.Rate != 16000 {
			t.Logf("%s: %d Hz, not a 16 kHz fixture; skipped", p, w.Rate)
			continue
		}
		out = append(out, signal{"fixture " + filepath.Base(p), w.Samples})
	}
	return out
}
