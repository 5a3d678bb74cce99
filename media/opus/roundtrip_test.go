//go:build cgo

package opus

import (
	"testing"
	"time"
)

// minToneSNR is the bar for a 1 kHz tone through the codec at 32 kbit/s:
// waveform SNR after aligning for the codec delay. Measured 15 to 33 dB
// across complexities (Opus is perceptual: complexity 10 spends its bits on
// things a waveform measure does not reward). 12 dB is an error a sixteenth
// of the signal's energy; a wrong delay, garbled packets or a decoder
// producing something else land near or below 0 dB (the control case).
const minToneSNR = 12.0

// TestRoundTripTone encodes and decodes 1 s of a 1 kHz tone and compares
// the output with the input.
// Mutations caught: a decoder that writes a different frame (the control
// case pins that the measure fails on garbled audio), an encoder ignoring
// its input, frame lengths lost or doubled in Encode/Decode.
func TestRoundTripTone(t *testing.T) {
	tests := []struct {
		name       string
		enc        EncoderConfig
		dec        DecoderConfig
		corrupt    bool
		wantPassed bool
	}{
		{"48k complexity lowest", EncoderConfig{Complexity: ComplexityLowest}, DecoderConfig{}, false, true},
		{"48k complexity 5", EncoderConfig{Complexity: 5}, DecoderConfig{}, false, true},
		{"48k complexity 10", EncoderConfig{Complexity: 10}, DecoderConfig{}, false, true},
		{"48k 10 ms frames", EncoderConfig{FrameDuration: 10 * time.Millisecond}, DecoderConfig{}, false, true},
		{"48k 60 ms frames", EncoderConfig{FrameDuration: 60 * time.Millisecond}, DecoderConfig{}, false, true},
		{"48k fec and dtx on", EncoderConfig{FEC: true, PacketLossPercent: 20, DTX: true}, DecoderConfig{}, false, true},
		{"16k both sides", EncoderConfig{SampleRate: 16000}, DecoderConfig{SampleRate: 16000}, false, true},
		{"8k both sides", EncoderConfig{SampleRate: 8000}, DecoderConfig{SampleRate: 8000}, false, true},
		// Control: the same measure on packets whose payload was scrambled
		// must fail, or the test could not catch a broken codec.
		{"control: corrupted payloads", EncoderConfig{}, DecoderConfig{}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, err := NewEncoder(tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := NewDecoder(tt.dec)
			if err != nil {
				t.Fatal(err)
			}
			rate := enc.Config().SampleRate
			fs := enc.FrameSamples()
			in := sine(rate, 1000, 0.5, (rate+fs-1)/fs*fs) // 1 s, whole frames
			packets := encodeAll(t, enc, in)
			if len(packets)*fs != len(in) {
				t.Fatalf("%d packets of %d samples for %d samples in", len(packets), fs, len(in))
			}
			if tt.corrupt {
				for _, p := range packets {
					for i := 1; i < len(p); i++ {
						p[i] ^= 0x5a
					}
				}
			}
			out := decodeAll(t, dec, packets, nil, false)
			if len(out) != len(in) {
				t.Fatalf("decoded %d samples, want %d", len(out), len(in))
			}
			// Skip the first 100 ms (the encoder settling) and keep 10 ms of
			// room for the delay, which is searched over 0-10 ms.
			maxLag := rate / 100
			lag, corr := bestLag(in[rate/10:], out[rate/10:], maxLag)
			snr := snrDB(in, out, lag, rate/10, len(in)-maxLag)
			t.Logf("delay %d samples, correlation %.4f, snr %.1f dB", lag, corr, snr)
			if passed := snr >= minToneSNR; passed != tt.wantPassed {
				t.Fatalf("snr %.1f dB against the bar of %.0f dB: passed %v, want %v", snr, minToneSNR, passed, tt.wantPassed)
			}
			if st := dec.Stats(); st.Decoded != uint64(len(packets)) || st.Corrupt != 0 {
				t.Fatalf("stats %+v, want %d decoded and nothing else", st, len(packets))
			}
		})
	}
}
