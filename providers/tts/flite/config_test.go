package flite

import (
	"errors"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want error
	}{
		{"zero", Config{}, nil},
		{"every voice", Config{Voice: "kal"}, nil},
		{"voice with spaces", Config{Voice: " rms "}, nil},
		{"unknown voice", Config{Voice: "awb_time"}, ErrUnknownVoice},
		{"rate too low", Config{Rate: 4000}, ErrInvalidConfig},
		{"rate too high", Config{Rate: 96000}, ErrInvalidConfig},
		{"negative rate", Config{Rate: -1}, ErrInvalidConfig},
		{"chunk too short", Config{Chunk: time.Millisecond}, ErrInvalidConfig},
		{"chunk too long", Config{Chunk: time.Second}, ErrInvalidConfig},
		{"tiny piece", Config{MaxPieceRunes: 5}, ErrInvalidConfig},
		{"tiny context", Config{MaxContextBytes: 10}, ErrInvalidConfig},
		{"negative contexts", Config{MaxOpenContexts: -1}, ErrInvalidConfig},
		{"all set", Config{Voice: "slt", Rate: 24000, Chunk: 20 * time.Millisecond, MaxPieceRunes: 100, MaxContextBytes: 4096, MaxOpenContexts: 4}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Validate() = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config
		voice string
		rate  int
		chunk int
	}{
		{"zero", Config{}, "slt", 16000, 640},
		{"kal is 8 kHz", Config{Voice: "kal"}, "kal", 8000, 320},
		{"rate set", Config{Voice: "kal16", Rate: 24000, Chunk: 20 * time.Millisecond}, "kal16", 24000, 480},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg.withDefaults()
			if c.Voice != tc.voice || c.Rate != tc.rate || c.chunkSamples() != tc.chunk {
				t.Errorf("voice %q rate %d chunk %d, want %q %d %d", c.Voice, c.Rate, c.chunkSamples(), tc.voice, tc.rate, tc.chunk)
			}
			if c.MaxPieceRunes != DefaultMaxPieceRunes || c.MaxContextBytes != DefaultMaxContextBytes || c.MaxOpenContexts != DefaultMaxOpenContexts {
				t.Errorf("bounds %d %d %d", c.MaxPieceRunes, c.MaxContextBytes, c.MaxOpenContexts)
			}
		})
	}
	for _, v := range Voices() {
		if err := (Config{Voice: v}).Validate(); err != nil {
			t.Errorf("listed voice %q: %v", v, err)
		}
	}
}
