package g722_test

import (
	"slices"
	"testing"

	"github.com/brisvox/brisvox/media/g722"
)

// FuzzDecode feeds arbitrary payloads (what a caller's RTP carries) to
// Decode: it must not panic, must return two samples per byte, and must be
// deterministic (a Reset decoder decodes the same bytes to the same
// samples). The destination size comes from the input too, so short and odd
// buffers are covered.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0x00, 0x3f, 0x40, 0xff}, uint16(8))
	f.Add(make([]byte, 160), uint16(320))
	f.Fuzz(func(t *testing.T, src []byte, dstLen uint16) {
		d := g722.NewDecoder()
		dst := make([]int16, int(dstLen)%4096)
		n := d.Decode(dst, src)
		if want := min(2*len(src), len(dst)&^1); n != want {
			t.Fatalf("Decode = %d samples for %d bytes into %d, want %d", n, len(src), len(dst), want)
		}
		d.Reset()
		again := make([]int16, len(dst))
		d.Decode(again, src)
		if !slices.Equal(dst[:n], again[:n]) {
			t.Fatal("a reset decoder decodes the same bytes differently")
		}
	})
}

// FuzzEncode feeds arbitrary PCM (the bytes read as little-endian int16)
// to Encode: no panic, one byte per pair, deterministic after Reset.
func FuzzEncode(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0xff, 0x7f, 0x00, 0x80, 0x01}, uint16(4))
	f.Fuzz(func(t *testing.T, raw []byte, dstLen uint16) {
		pcm := make([]int16, len(raw)/2)
		for i := range pcm {
			pcm[i] = int16(uint16(raw[2*i]) | uint16(raw[2*i+1])<<8)
		}
		e := g722.NewEncoder()
		dst := make([]byte, int(dstLen)%4096)
		n := e.Encode(dst, pcm)
		if want := min(len(pcm)/2, len(dst)); n != want {
			t.Fatalf("Encode = %d bytes for %d samples into %d, want %d", n, len(pcm), len(dst), want)
		}
		e.Reset()
		again := make([]byte, len(dst))
		e.Encode(again, pcm)
		if !slices.Equal(dst[:n], again[:n]) {
			t.Fatal("a reset encoder encodes the same samples differently")
		}
	})
}
