package pocketsphinx

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConfigValidate pins what Validate refuses.
// Mutations caught: a rate check that lets 8 kHz through (or whose error
// does not say why), a dropped bound, the model files not checked.
func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Skipf("the Debian model is missing, so the defaults cannot validate: %v", err)
	}
	cases := []struct {
		name string
		cfg  Config
		want error
		text string // in the message
	}{
		{name: "defaults", cfg: Config{}},
		{name: "16 kHz said", cfg: Config{SampleRate: 16000}},
		{name: "8 kHz telephone", cfg: Config{SampleRate: 8000}, want: ErrSampleRate, text: "8 kHz telephone audio"},
		{name: "48 kHz", cfg: Config{SampleRate: 48000}, want: ErrSampleRate, text: "SampleRate 48000"},
		{name: "negative rate", cfg: Config{SampleRate: -16000}, want: ErrSampleRate},
		{name: "interim under a frame", cfg: Config{InterimInterval: 10 * time.Millisecond}, want: ErrInvalidConfig},
		{name: "negative pool", cfg: Config{PoolSize: -1}, want: ErrInvalidConfig},
		{name: "negative acquire timeout", cfg: Config{AcquireTimeout: -time.Second}, want: ErrInvalidConfig},
		{name: "negative pre-roll", cfg: Config{PreRoll: -time.Millisecond}, want: ErrInvalidConfig, text: "PreRoll"},
		{name: "pre-roll over 5s", cfg: Config{PreRoll: 6 * time.Second}, want: ErrInvalidConfig, text: "PreRoll"},
		{name: "tiny queue", cfg: Config{Queue: 20 * time.Millisecond}, want: ErrInvalidConfig},
		{name: "tiny max utterance", cfg: Config{MaxUtterance: 500 * time.Millisecond}, want: ErrInvalidConfig},
		{name: "negative event buffer", cfg: Config{EventBuffer: -1}, want: ErrInvalidConfig},
		{name: "no acoustic model", cfg: Config{ModelDir: t.TempDir()}, want: ErrInvalidConfig, text: "ModelDir"},
		{name: "no language model", cfg: Config{LanguageModel: "/nonexistent/en-us.lm.bin"}, want: ErrInvalidConfig, text: "LanguageModel"},
		{name: "dictionary is a directory", cfg: Config{Dict: t.TempDir()}, want: ErrInvalidConfig, text: "Dict"},
		{name: "domain weight 1", cfg: Config{DomainWeight: 1}, want: ErrInvalidConfig, text: "DomainWeight"},
		{name: "negative domain weight", cfg: Config{DomainWeight: -0.5}, want: ErrInvalidConfig, text: "DomainWeight"},
		{name: "domain from the llm without phrases", cfg: Config{DomainFrom: DomainFromLLM}, want: ErrInvalidConfig, text: "no Domain"},
		{name: "unknown domain source", cfg: Config{DomainFrom: "grammar"}, want: ErrInvalidConfig, text: `DomainFrom "grammar"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if c.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Validate: %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q does not say %q", err, c.text)
			}
			if cgoEnabled {
				if _, err := New(c.cfg); !errors.Is(err, c.want) {
					t.Errorf("New: %v, want %v", err, c.want)
				}
			}
		})
	}
}
