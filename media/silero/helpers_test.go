//go:build cgo

package silero

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// requireFiles finds the native files. A missing file fails the test with
// LocateFiles' message (which names the file and says to run `go tool task
// setup`); only under -short are the model tests skipped.
func requireFiles(t testing.TB) Files {
	t.Helper()
	files, err := LocateFiles("", "")
	if err != nil {
		if testing.Short() {
			t.Skipf("-short: %v", err)
		}
		t.Fatalf("native files missing: %v", err)
	}
	return files
}

// newTestModel makes a model closed at the end of the test.
func newTestModel(t testing.TB, rate, maxBatch int) *Model {
	t.Helper()
	requireFiles(t)
	m, err := NewModel(ModelConfig{SampleRate: rate, MaxBatch: maxBatch})
	if err != nil {
		t.Fatalf("NewModel: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// newTestPool makes a pool closed at the end of the test (Close is
// idempotent, so a test may close it earlier).
func newTestPool(t testing.TB, cfg PoolConfig) *Pool {
	t.Helper()
	requireFiles(t)
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// speech synthesizes text with espeak-ng and converts it with sox to mono
// PCM16 at rate. Both tools come with `go tool task setup`.
func speech(t testing.TB, text string, rate int) []int16 {
	t.Helper()
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.wav")
	out := filepath.Join(dir, "out.wav")
	for _, cmd := range [][]string{
		{"espeak-ng", "-w", raw, text},
		{"sox", raw, "-r", fmt.Sprint(rate), "-c", "1", "-b", "16", "-e", "signed-integer", out},
	} {
		if b, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s\n(run `go tool task setup` to install it)", cmd[0], err, b)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	gotRate, pcm, err := readWAV(data)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if gotRate != rate {
		t.Fatalf("%s: rate %d, want %d", out, gotRate, rate)
	}
	return pcm
}

// readWAV reads a mono PCM16 RIFF/WAVE file: just enough for the test
// audio sox writes.
func readWAV(b []byte) (rate int, pcm []int16, err error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, nil, errors.New("not a RIFF/WAVE file")
	}
	le := binary.LittleEndian
	var haveFmt bool
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(le.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		if size > len(body) {
			size = len(body) // sox may leave the size of a piped file unset
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if size < 16 {
				return 0, nil, errors.New("short fmt chunk")
			}
			format, channels, bits := le.Uint16(body[0:2]), le.Uint16(body[2:4]), le.Uint16(body[14:16])
			if (format != 1 && format != 0xFFFE) || channels != 1 || bits != 16 {
				return 0, nil, fmt.Errorf("format %d, %d channels, %d bits: want mono PCM16", format, channels, bits)
			}
			rate, haveFmt = int(le.Uint32(body[4:8])), true
		case "data":
			if !haveFmt {
				return 0, nil, errors.New("data before fmt")
			}
			pcm = make([]int16, size/2)
			for i := range pcm {
				pcm[i] = int16(le.Uint16(body[2*i:]))
			}
			return rate, pcm, nil
		}
		p += 8 + size + size%2
	}
	return 0, nil, errors.New("no data chunk")
}

// noise is deterministic low-level white noise (a line's hiss, about -60
// dBFS), so that "silence" is not digital zeros.
func noise(n int, seed uint32) []int16 {
	pcm := make([]int16, n)
	x := seed | 1
	for i := range pcm {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		pcm[i] = int16(int32(x%65) - 32)
	}
	return pcm
}

// concat joins pieces of audio.
func concat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// mix adds b onto a (saturating), for speech over the line noise.
func mix(a, b []int16) []int16 {
	out := make([]int16, max(len(a), len(b)))
	for i := range out {
		var s int32
		if i < len(a) {
			s += int32(a[i])
		}
		if i < len(b) {
			s += int32(b[i])
		}
		out[i] = int16(max(math.MinInt16, min(math.MaxInt16, s)))
	}
	return out
}

// windows cuts pcm into whole windows of n samples.
func windows(pcm []int16, n int) [][]int16 {
	var w [][]int16
	for i := 0; i+n <= len(pcm); i += n {
		w = append(w, pcm[i:i+n])
	}
	return w
}

// runAlone runs the windows of one fresh stream one at a time.
func runAlone(t testing.TB, m *Model, ws [][]int16) []float32 {
	t.Helper()
	s, err := NewStream(m.Rate())
	if err != nil {
		t.Fatal(err)
	}
	probs := make([]float32, len(ws))
	for i, w := range ws {
		if err := m.Run([]*Stream{s}, [][]int16{w}, probs[i:i+1]); err != nil {
			t.Fatalf("window %d: %v", i, err)
		}
	}
	return probs
}
