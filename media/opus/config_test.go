//go:build cgo

package opus

import (
	"errors"
	"testing"
	"time"
)

func TestEncoderConfigValidate(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		cfg  EncoderConfig
		ok   bool
	}{
		{"zero takes defaults", EncoderConfig{}, true},
		{"8 kHz", EncoderConfig{SampleRate: 8000}, true},
		{"12 kHz", EncoderConfig{SampleRate: 12000}, true},
		{"16 kHz", EncoderConfig{SampleRate: 16000}, true},
		{"24 kHz", EncoderConfig{SampleRate: 24000}, true},
		{"44.1 kHz", EncoderConfig{SampleRate: 44100}, false},
		{"negative rate", EncoderConfig{SampleRate: -48000}, false},
		{"10 ms", EncoderConfig{FrameDuration: 10 * ms}, true},
		{"40 ms", EncoderConfig{FrameDuration: 40 * ms}, true},
		{"60 ms", EncoderConfig{FrameDuration: 60 * ms}, true},
		{"2.5 ms", EncoderConfig{FrameDuration: 2500 * time.Microsecond}, false},
		{"30 ms", EncoderConfig{FrameDuration: 30 * ms}, false},
		{"80 ms", EncoderConfig{FrameDuration: 80 * ms}, false},
		{"negative duration", EncoderConfig{FrameDuration: -20 * ms}, false},
		{"application audio", EncoderConfig{Application: ApplicationAudio}, true},
		{"application low delay", EncoderConfig{Application: ApplicationLowDelay}, true},
		{"application unknown", EncoderConfig{Application: 3}, false},
		{"application negative", EncoderConfig{Application: -1}, false},
		{"complexity lowest", EncoderConfig{Complexity: ComplexityLowest}, true},
		{"complexity 1", EncoderConfig{Complexity: 1}, true},
		{"complexity 10", EncoderConfig{Complexity: 10}, true},
		{"complexity 11", EncoderConfig{Complexity: 11}, false},
		{"complexity -2", EncoderConfig{Complexity: -2}, false},
		{"bitrate min", EncoderConfig{Bitrate: MinBitrate}, true},
		{"bitrate max", EncoderConfig{Bitrate: MaxBitrate}, true},
		{"bitrate below min", EncoderConfig{Bitrate: MinBitrate - 1}, false},
		{"bitrate above max", EncoderConfig{Bitrate: MaxBitrate + 1}, false},
		{"bitrate negative", EncoderConfig{Bitrate: -1}, false},
		{"loss 100", EncoderConfig{PacketLossPercent: 100}, true},
		{"loss 101", EncoderConfig{PacketLossPercent: 101}, false},
		{"loss negative", EncoderConfig{PacketLossPercent: -1}, false},
		{"fec with loss", EncoderConfig{FEC: true, PacketLossPercent: 20}, true},
		{"fec without loss", EncoderConfig{FEC: true}, false},
		{"fec with low delay", EncoderConfig{FEC: true, PacketLossPercent: 20, Application: ApplicationLowDelay}, false},
		{"dtx", EncoderConfig{DTX: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %v, does not wrap ErrInvalidConfig", err)
			}
			// NewEncoder must refuse what Validate refuses and build what it
			// accepts: libopus's own ranges agree with Validate's.
			enc, err := NewEncoder(tt.cfg)
			if (err == nil) != tt.ok {
				t.Fatalf("NewEncoder() = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("NewEncoder() = %v, does not wrap ErrInvalidConfig", err)
			}
			if enc == nil {
				return
			}
			if got, want := enc.FrameSamples(), samplesIn(enc.Config().SampleRate, enc.Config().FrameDuration); got != want || got == 0 {
				t.Fatalf("FrameSamples() = %d, want %d", got, want)
			}
		})
	}
}

// TestNewEncoderReachesLibopus reads the settings back from libopus.
// Mutation caught: dropping one of the setter calls in NewEncoder, or
// mapping Complexity 0 / ComplexityLowest wrongly.
func TestNewEncoderReachesLibopus(t *testing.T) {
	tests := []struct {
		name           string
		cfg            EncoderConfig
		wantComplexity int
		wantBitrate    int
	}{
		{"defaults", EncoderConfig{}, DefaultComplexity, DefaultBitrate},
		{"lowest", EncoderConfig{Complexity: ComplexityLowest, Bitrate: 12000}, 0, 12000},
		{"highest with fec and dtx", EncoderConfig{Complexity: 10, Bitrate: 64000, FEC: true, PacketLossPercent: 15, DTX: true}, 10, 64000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, err := NewEncoder(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			complexity, err := enc.enc.Complexity()
			if err != nil || complexity != tt.wantComplexity {
				t.Errorf("complexity = %d, %v; want %d", complexity, err, tt.wantComplexity)
			}
			bitrate, err := enc.enc.Bitrate()
			if err != nil || bitrate != tt.wantBitrate {
				t.Errorf("bitrate = %d, %v; want %d", bitrate, err, tt.wantBitrate)
			}
			fec, err := enc.enc.InBandFEC()
			if err != nil || fec != tt.cfg.FEC {
				t.Errorf("fec = %v, %v; want %v", fec, err, tt.cfg.FEC)
			}
			loss, err := enc.enc.PacketLossPerc()
			if err != nil || loss != tt.cfg.PacketLossPercent {
				t.Errorf("loss = %d, %v; want %d", loss, err, tt.cfg.PacketLossPercent)
			}
			dtx, err := enc.enc.DTX()
			if err != nil || dtx != tt.cfg.DTX {
				t.Errorf("dtx = %v, %v; want %v", dtx, err, tt.cfg.DTX)
			}
		})
	}
}

func TestDecoderConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  DecoderConfig
		ok   bool
	}{
		{"zero takes defaults", DecoderConfig{}, true},
		{"16 kHz", DecoderConfig{SampleRate: 16000}, true},
		{"8 kHz 10 ms", DecoderConfig{SampleRate: 8000, FrameDuration: 10 * time.Millisecond}, true},
		{"2.5 ms", DecoderConfig{FrameDuration: 2500 * time.Microsecond}, true},
		{"60 ms", DecoderConfig{FrameDuration: 60 * time.Millisecond}, true},
		{"22.05 kHz", DecoderConfig{SampleRate: 22050}, false},
		{"3 ms", DecoderConfig{FrameDuration: 3 * time.Millisecond}, false},
		{"62.5 ms", DecoderConfig{FrameDuration: 62500 * time.Microsecond}, false},
		{"negative duration", DecoderConfig{FrameDuration: -time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %v, does not wrap ErrInvalidConfig", err)
			}
			dec, err := NewDecoder(tt.cfg)
			if (err == nil) != tt.ok {
				t.Fatalf("NewDecoder() = %v, want ok %v", err, tt.ok)
			}
			if dec != nil && dec.LostFrameSamples() != samplesIn(dec.Config().SampleRate, dec.Config().FrameDuration) {
				t.Fatalf("LostFrameSamples() = %d before any packet", dec.LostFrameSamples())
			}
		})
	}
}
