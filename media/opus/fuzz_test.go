//go:build cgo

package opus

import (
	"errors"
	"testing"
	"time"
)

// addSeeds adds real packets of several modes and durations and a few
// malformed ones.
func addSeeds(f *testing.F) {
	for _, cfg := range []EncoderConfig{
		{},
		{FEC: true, PacketLossPercent: 20},
		{Application: ApplicationLowDelay, FrameDuration: 10 * time.Millisecond},
		{SampleRate: 8000, FrameDuration: 60 * time.Millisecond},
		{Application: ApplicationAudio, FrameDuration: 40 * time.Millisecond, Bitrate: 128000},
	} {
		enc, err := NewEncoder(cfg)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range encodeAll(f, enc, speechLike(enc.Config().SampleRate, enc.FrameSamples()*3)) {
			f.Add(p)
		}
	}
	for _, p := range [][]byte{nil, {0}, {3}, {0xfb, 0x83, 1}, {0x7b, 0x41, 255}, {0xfa, 252}} {
		f.Add(p)
	}
}

// FuzzDecode decodes arbitrary bytes, as the network may send them, and
// then conceals and decodes FEC from them. Nothing may panic; every refusal
// wraps ErrCorruptPacket; the decoded length is the packet's duration; and
// the packet parser refuses nothing libopus accepts (else Decode would
// count good packets as corrupt).
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := NewDecoder(DecoderConfig{})
		if err != nil {
			t.Fatal(err)
		}
		pcm := make([]int16, 5760)
		_, parseErr := parsePacket(data)
		var libErr error
		if len(data) > 0 {
			_, libErr = dec.dec.Decode(data, pcm)
		}
		if parseErr != nil && libErr == nil && len(data) > 0 {
			t.Fatalf("%x: parser refuses (%v), libopus accepts", data, parseErr)
		}

		dec, err = NewDecoder(DecoderConfig{})
		if err != nil {
			t.Fatal(err)
		}
		n, err := dec.Decode(data, pcm)
		if err != nil {
			if !errors.Is(err, ErrCorruptPacket) {
				t.Fatalf("%x: %v", data, err)
			}
		} else {
			p, _ := parsePacket(data)
			if want := p.samples(48000); n != want {
				t.Fatalf("%x: %d samples, the packet says %d", data, n, want)
			}
		}
		if err := dec.DecodeFEC(data, pcm); err != nil && !errors.Is(err, ErrCorruptPacket) {
			t.Fatalf("%x: fec: %v", data, err)
		}
		if _, err := dec.Conceal(pcm); err != nil {
			t.Fatalf("%x: conceal: %v", data, err)
		}
	})
}
