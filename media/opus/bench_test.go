//go:build cgo

package opus

import (
	"fmt"
	"testing"
)

// benchPackets is 1 s of the speech-like signal at 48 kHz in 20 ms frames.
func benchPackets(b *testing.B, complexity int) (in []int16, packets [][]byte) {
	b.Helper()
	enc, err := NewEncoder(EncoderConfig{Complexity: complexity})
	if err != nil {
		b.Fatal(err)
	}
	in = speechLike(48000, 48000)
	return in, encodeAll(b, enc, in)
}

// BenchmarkEncode encodes one 20 ms frame at 48 kHz, 32 kbit/s.
func BenchmarkEncode(b *testing.B) {
	for _, c := range []int{5, 10} {
		b.Run(fmt.Sprintf("complexity=%d", c), func(b *testing.B) {
			enc, err := NewEncoder(EncoderConfig{Complexity: c})
			if err != nil {
				b.Fatal(err)
			}
			in := speechLike(48000, 48000)
			out := make([]byte, MaxPacketBytes)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := enc.Encode(in[i*960:][:960], out); err != nil {
					b.Fatal(err)
				}
				i = (i + 1) % 50
			}
		})
	}
}

// BenchmarkDecode decodes one 20 ms frame at 48 kHz from packets of an
// encoder at the complexity named (the decoder has no complexity setting;
// the packets differ).
func BenchmarkDecode(b *testing.B) {
	for _, c := range []int{5, 10} {
		b.Run(fmt.Sprintf("complexity=%d", c), func(b *testing.B) {
			_, packets := benchPackets(b, c)
			dec, err := NewDecoder(DecoderConfig{})
			if err != nil {
				b.Fatal(err)
			}
			pcm := make([]int16, 960)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := dec.Decode(packets[i], pcm); err != nil {
					b.Fatal(err)
				}
				i = (i + 1) % len(packets)
			}
		})
	}
}

// BenchmarkConceal conceals one lost 20 ms frame at 48 kHz after a decoded
// one (a steady run of losses would measure libopus's cheaper fade-out).
func BenchmarkConceal(b *testing.B) {
	_, packets := benchPackets(b, 5)
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		b.Fatal(err)
	}
	pcm := make([]int16, 960)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		if _, err := dec.Decode(packets[i], pcm); err != nil {
			b.Fatal(err)
		}
		i = (i + 1) % len(packets)
		b.StartTimer()
		if _, err := dec.Conceal(pcm); err != nil {
			b.Fatal(err)
		}
	}
}
