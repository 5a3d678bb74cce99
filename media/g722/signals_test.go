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
