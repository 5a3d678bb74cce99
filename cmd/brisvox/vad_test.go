package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/media"
)

// burst is one tone burst of a test signal, in milliseconds.
type burst struct{ from, to int }

// bursts is rate-Hz mono audio of total ms: a 440 Hz sine of amplitude
// 8000 (far above the energy threshold) in the bursts, digital zero
// elsewhere.
func bursts(rate, total int, bs ...burst) []int16 {
	s := make([]int16, total*rate/1000)
	for _, b := range bs {
		for i := b.from * rate / 1000; i < b.to*rate/1000; i++ {
			s[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
		}
	}
	return s
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func monoWAV(t *testing.T, rate int, s []int16) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := media.WriteWAV(&b, rate, s); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// wavHeader is a 44-byte header for a canonical WAV of the given format.
func wavHeader(tag uint16, channels, rate, bits, dataBytes int) []byte {
	h := make([]byte, 44)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+dataBytes))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], tag)
	binary.LittleEndian.PutUint16(h[22:], uint16(channels))
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*channels*bits/8))
	binary.LittleEndian.PutUint16(h[32:], uint16(channels*bits/8))
	binary.LittleEndian.PutUint16(h[34:], uint16(bits))
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(dataBytes))
	return h
}

// stereoWAV puts left and right in a 16-bit stereo file.
func stereoWAV(rate int, left, right []int16) []byte {
	b := wavHeader(1, 2, rate, 16, 4*len(left))
	for i := range left {
		b = binary.LittleEndian.AppendUint16(b, uint16(left[i]))
		b = binary.LittleEndian.AppendUint16(b, uint16(right[i]))
	}
	return b
}

func runVAD(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(append([]string{"vad"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// parseSegments decodes the JSON lines, failing on anything else.
func parseSegments(t *testing.T, out string) []vadSegment {
	t.Helper()
	var segs []vadSegment
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		var s vadSegment
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		segs = append(segs, s)
	}
	return segs
}

func TestVADCommand(t *testing.T) {
	// Bursts on the 20 ms frame grid come back exactly; an off-grid burst
	// is widened to the frames that hold it.
	onGrid := []burst{{500, 900}, {1500, 1800}}
	wantOnGrid := []vadSegment{{500, 900}, {1500, 1800}}
	tests := []struct {
		name string
		file []byte
		args []string // before the file; nil for none
		want []vadSegment
	}{
		{name: "16 kHz mono", file: monoWAV(t, 16000, bursts(16000, 2800, onGrid...)), want: wantOnGrid},
		{name: "8 kHz mono", file: monoWAV(t, 8000, bursts(8000, 2800, onGrid...)), want: wantOnGrid},
		{name: "24 kHz mono", file: monoWAV(t, 24000, bursts(24000, 2800, onGrid...)), want: wantOnGrid},
		{name: "48 kHz mono, explicit engine", file: monoWAV(t, 48000, bursts(48000, 2800, onGrid...)), args: []string{"--engine", "energy"}, want: wantOnGrid},
		{
			// Mutation: reading the left channel only finds the first
			// burst alone.
			name: "48 kHz stereo, one burst per channel",
			file: stereoWAV(48000, bursts(48000, 2800, onGrid[0]), bursts(48000, 2800, onGrid[1])),
			want: wantOnGrid,
		},
		{
			// Mutation: dating the start at the confirming frame gives
			// 520; not backdating the stop gives 1220.
			name: "off-grid burst widened to its frames",
			file: monoWAV(t, 16000, bursts(16000, 2000, burst{510, 910})),
			want: []vadSegment{{500, 920}},
		},
		{
			// Mutation: dropping speech still open at the end of the file
			// loses this segment.
			name: "speech to the end of the file",
			file: monoWAV(t, 16000, bursts(16000, 1000, burst{600, 1000})),
			want: []vadSegment{{600, 1000}},
		},
		{
			name: "a 200 ms pause stays inside the 300 ms hangover",
			file: monoWAV(t, 16000, bursts(16000, 2000, burst{200, 600}, burst{800, 1200})),
			want: []vadSegment{{200, 1200}},
		},
		{name: "silence", file: monoWAV(t, 16000, make([]int16, 16000)), want: nil},
		{
			name: "truncated file: the audio it holds",
			file: func() []byte {
				b := monoWAV(t, 16000, bursts(16000, 2000, burst{500, 900}))
				return b[:len(b)-16000] // cut the last 500 ms
			}(),
			want: []vadSegment{{500, 900}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "in.wav", tc.file)
			code, out, errOut := runVAD(append(slices.Clone(tc.args), path)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := parseSegments(t, out); !slices.Equal(got, tc.want) {
				t.Fatalf("segments %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("flag after the file", func(t *testing.T) {
		path := writeFile(t, "in.wav", monoWAV(t, 16000, bursts(16000, 2800, onGrid...)))
		code, out, errOut := runVAD(path, "--engine", "energy")
		if code != 0 || !slices.Equal(parseSegments(t, out), wantOnGrid) {
			t.Fatalf("exit %d, out %q, stderr %q", code, out, errOut)
		}
	})

	t.Run("truncation is reported", func(t *testing.T) {
		b := monoWAV(t, 16000, make([]int16, 1600))
		code, _, errOut := runVAD(writeFile(t, "cut.wav", b[:len(b)-100]))
		if code != 0 || !strings.Contains(errOut, "truncated") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestVADCommandErrors(t *testing.T) {
	ok := func(t *testing.T) string {
		return writeFile(t, "ok.wav", monoWAV(t, 16000, make([]int16, 1600)))
	}
	tests := []struct {
		name string
		args func(t *testing.T) []string
		code int
		says string
	}{
		{name: "no file", args: func(*testing.T) []string { return nil }, code: 2, says: "usage: brisvox vad"},
		{name: "two files", args: func(t *testing.T) []string { return []string{ok(t), ok(t)} }, code: 2, says: "usage: brisvox vad"},
		{name: "unknown flag", args: func(t *testing.T) []string { return []string{"--frames", "10", ok(t)} }, code: 2, says: "frames"},
		{name: "unknown engine", args: func(t *testing.T) []string { return []string{"--engine", "webrtc", ok(t)} }, code: 2, says: `unknown engine "webrtc"`},
		{
			name: "silero without its runtime",
			args: func(t *testing.T) []string {
				t.Setenv("BRISVOX_ORT_LIB", filepath.Join(t.TempDir(), "libonnxruntime.so.1"))
				return []string{"--engine", "silero", ok(t)}
			},
			code: 1, says: "go tool task setup",
		},
		{name: "missing file", args: func(t *testing.T) []string { return []string{filepath.Join(t.TempDir(), "nope.wav")} }, code: 1, says: "nope.wav"},
		{
			name: "mu-law",
			args: func(t *testing.T) []string {
				return []string{writeFile(t, "ulaw.wav", append(wavHeader(7, 1, 8000, 8, 4), 0xff, 0xff, 0xff, 0xff))}
			},
			code: 1, says: "format 7 (mu-law)",
		},
		{
			name: "float",
			args: func(t *testing.T) []string {
				return []string{writeFile(t, "float.wav", append(wavHeader(3, 1, 16000, 32, 4), 0, 0, 0, 0))}
			},
			code: 1, says: "IEEE float",
		},
		{
			name: "44.1 kHz",
			args: func(t *testing.T) []string {
				return []string{writeFile(t, "cd.wav", monoWAV(t, 44100, make([]int16, 441)))}
			},
			code: 1, says: "unsupported sample rate 44100 Hz",
		},
		{
			name: "not a WAV",
			args: func(t *testing.T) []string { return []string{writeFile(t, "notes.wav", []byte("hello, this is text"))} },
			code: 1, says: "not a RIFF file",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runVAD(tc.args(t)...)
			if code != tc.code || !strings.Contains(errOut, tc.says) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d saying %q", code, out, errOut, tc.code, tc.says)
			}
		})
	}
}

// TestVADCommandHelp: -h prints the usage and succeeds.
func TestVADCommandHelp(t *testing.T) {
	code, _, errOut := runVAD("-h")
	if code != 0 || !strings.Contains(errOut, "--engine energy|silero") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
