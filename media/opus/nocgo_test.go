//go:build !cgo

package opus

import (
	"errors"
	"testing"
)

// TestNewWithoutCgo: a build without cgo fails clearly in NewEncoder and
// NewDecoder, after the config is checked.
// Mutation caught: a constructor that skips Validate without cgo, or a
// failure that does not wrap ErrNoCgo.
func TestNewWithoutCgo(t *testing.T) {
	tests := []struct {
		name string
		make func() error
		want error
	}{
		{"encoder", func() error { _, err := NewEncoder(EncoderConfig{}); return err }, ErrNoCgo},
		{"decoder", func() error { _, err := NewDecoder(DecoderConfig{}); return err }, ErrNoCgo},
		{"bad encoder config", func() error { _, err := NewEncoder(EncoderConfig{Bitrate: 1}); return err }, ErrInvalidConfig},
		{"bad decoder config", func() error { _, err := NewDecoder(DecoderConfig{SampleRate: 44100}); return err }, ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.make(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}
