package openaispeech

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// wav builds a WAV stream: a fmt chunk with the given fields, extra
// chunks before the data, then pcm.
func wav(tag, channels uint16, rate uint32, bits uint16, extra []byte, pcm []byte) []byte {
	b := []byte("RIFF\xff\xff\xff\xffWAVEfmt ")
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, tag)
	b = binary.LittleEndian.AppendUint16(b, channels)
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, rate*uint32(channels*bits/8))
	b = binary.LittleEndian.AppendUint16(b, channels*bits/8)
	b = binary.LittleEndian.AppendUint16(b, bits)
	b = append(b, extra...)
	b = append(b, "data\xff\xff\xff\xff"...)
	return append(b, pcm...)
}

// decodeAll feeds body to a fresh decoder in pieces of size step and
// returns the samples, the rate and the first error (end's included).
func decodeAll(body []byte, isWAV bool, step int) ([]int16, int, error) {
	var d decoder
	d.reset(isWAV, 24000)
	var out []int16
	for len(body) > 0 {
		n := min(step, len(body))
		pcm, err := d.decode(body[:n])
		if err != nil {
			return out, d.Rate(), err
		}
		out = append(out, pcm...)
		body = body[n:]
	}
	return out, d.Rate(), d.end()
}

// TestDecoder: raw PCM and WAV bodies, whole and split at every size,
// give the same samples; bad headers are Protocol errors. Mutations seen
// failing: the pad byte of an odd-sized chunk not skipped (the LIST case);
// extensible PCM refused; the fmt check reduced to the format tag.
func TestDecoder(t *testing.T) {
	pcm := []byte{1, 0, 2, 0, 0xff, 0xff, 0x00, 0x80}
	want := []int16{1, 2, -1, -32768}
	ext := []byte("RIFF\x00\x00\x00\x00WAVEfmt \x28\x00\x00\x00\xfe\xff\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00\x16\x00\x10\x00\x04\x00\x00\x00\x01\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71data\x00\x00\x00\x00")
	cases := []struct {
		name  string
		body  []byte
		wav   bool
		rate  int
		want  []int16
		error bool
	}{
		{"raw pcm", pcm, false, 24000, want, false},
		{"raw pcm odd end", pcm[:7], false, 24000, nil, true},
		{"wav 16 kHz", wav(1, 1, 16000, 16, nil, pcm), true, 16000, want, false},
		{"wav with an odd LIST chunk", wav(1, 1, 22050, 16, []byte("LIST\x03\x00\x00\x00abc\x00"), pcm), true, 22050, want, false},
		{"wav extensible pcm", append(ext, pcm...), true, 16000, want, false},
		{"wav stereo", wav(1, 2, 24000, 16, nil, pcm), true, 0, nil, true},
		{"wav 8 bit", wav(1, 1, 24000, 8, nil, pcm), true, 0, nil, true},
		{"wav float", wav(3, 1, 24000, 16, nil, pcm), true, 0, nil, true},
		{"wav absurd rate", wav(1, 1, 1000000, 16, nil, pcm), true, 0, nil, true},
		{"not riff", append([]byte("ID3\x04"), pcm...), true, 0, nil, true},
		{"data before fmt", []byte("RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00\x01\x00"), true, 0, nil, true},
		{"header cut", wav(1, 1, 24000, 16, nil, nil)[:30], true, 0, nil, true},
		{"endless skipped chunk", append([]byte("RIFF\x00\x00\x00\x00WAVEjunk\xff\xff\xff\x7f"), make([]byte, 5000)...), true, 0, nil, true},
		{"fmt too long", []byte("RIFF\x00\x00\x00\x00WAVEfmt \x00\x01\x00\x00"), true, 0, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for step := 1; step <= len(c.body); step++ {
				got, rate, err := decodeAll(c.body, c.wav, step)
				if c.error {
					if !errors.Is(err, providers.ErrProtocol) {
						t.Fatalf("step %d: %v, want a Protocol error", step, err)
					}
					continue
				}
				if err != nil || rate != c.rate || !slices.Equal(got, c.want) {
					t.Fatalf("step %d: %v at %d Hz, %v; want %v at %d Hz", step, got, rate, err, c.want, c.rate)
				}
			}
		})
	}
}

// FuzzDecode: any body, split anywhere, never panics, gives the same
// samples and error class as the body whole, and at most one sample per
// two bytes.
func FuzzDecode(f *testing.F) {
	pcm := []byte{1, 0, 2, 0, 3, 0}
	f.Add(pcm, false, 1)
	f.Add(wav(1, 1, 24000, 16, nil, pcm), true, 1)
	f.Add(wav(1, 1, 24000, 16, []byte("LIST\x01\x00\x00\x00a\x00"), pcm), true, 3)
	f.Add(wav(1, 2, 24000, 16, nil, pcm), true, 7)
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x28\x00\x00\x00\xfe\xff"), true, 5)
	f.Fuzz(func(t *testing.T, body []byte, isWAV bool, step int) {
		if step <= 0 || step > len(body) {
			step = max(len(body), 1)
		}
		whole, wr, werr := decodeAll(body, isWAV, max(len(body), 1))
		split, sr, serr := decodeAll(body, isWAV, step)
		if (werr == nil) != (serr == nil) {
			t.Fatalf("whole: %v, split by %d: %v", werr, step, serr)
		}
		if werr != nil && !errors.Is(werr, providers.ErrProtocol) {
			t.Fatalf("not a Protocol error: %v", werr)
		}
		if werr == nil && (wr != sr || !slices.Equal(whole, split)) {
			t.Fatalf("whole %v at %d, split %v at %d", whole, wr, split, sr)
		}
		if 2*len(whole) > len(body) {
			t.Fatalf("%d samples from %d bytes", len(whole), len(body))
		}
	})
}

// BenchmarkDecodeChunk is the per-chunk cost of the body reader: one
// 40 ms chunk of 24 kHz PCM (1920 bytes) to samples.
func BenchmarkDecodeChunk(b *testing.B) {
	chunk := make([]byte, 1920)
	var d decoder
	d.reset(false, 24000)
	b.ReportAllocs()
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		if _, err := d.decode(chunk); err != nil {
			b.Fatal(err)
		}
	}
}
