package pacer

import (
	"errors"
	"testing"
	"time"
)

// TestConfigValidate: the table of accepted and refused configs.
// Mutation caught: a ConfirmEvery that is not a multiple of a frame
// accepted (marks would then never line up with a frame's end).
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{Rate: 16000}, true},
		{"confirm_100ms", Config{Rate: 8000, ConfirmEvery: 100 * time.Millisecond}, true},
		{"confirm_30ms", Config{Rate: 8000, ConfirmEvery: 30 * time.Millisecond}, false},
		{"confirm_negative", Config{Rate: 8000, ConfirmEvery: -20 * time.Millisecond}, false},
		{"end_echo_negative", Config{Rate: 8000, EndEchoTimeout: -time.Second}, false},
		{"lead_negative", Config{Rate: 8000, LeadMargin: -time.Millisecond}, false},
		{"rate_odd", Config{Rate: 16001}, false},
		{"start_lead_20ms", Config{Rate: 8000, StartLead: 20 * time.Millisecond}, true},
		{"start_lead_30ms", Config{Rate: 8000, StartLead: 30 * time.Millisecond}, false},
		{"start_lead_too_long", Config{Rate: 8000, StartLead: MaxStartLead + 20*time.Millisecond}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("got %v, want ErrInvalidConfig", err)
			}
		})
	}
}
