package pacer

import (
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
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

// TestConfirmNames: a position mark's name reads back as its epoch and
// position, and the names a client could send otherwise are refused.
// Mutation caught: the "pos-" prefix not required (a bare "3-100" is
// read).
func TestConfirmNames(t *testing.T) {
	for _, c := range []struct {
		e   messages.Epoch
		pos time.Duration
	}{{1, 0}, {7, 100 * time.Millisecond}, {1 << 40, time.Hour}} {
		e, pos, ok := parseConfirmName(confirmName(c.e, c.pos))
		if !ok || e != c.e || pos != c.pos {
			t.Errorf("%s read as %d %v %v", confirmName(c.e, c.pos), e, pos, ok)
		}
	}
	for _, bad := range []string{"", "end-3", "3-100", "pos-", "pos-3", "pos-3-", "pos--100", "pos-3--100", "pos-x-1", "pos-3-1e3", "pos-3-99999999999999999999"} {
		if e, pos, ok := parseConfirmName(bad); ok {
			t.Errorf("%q read as %d %v", bad, e, pos)
		}
	}
}

// FuzzConfirmName: a mark name comes back from the client: any string is
// either refused or read as a position that is not negative, and never
// panics.
func FuzzConfirmName(f *testing.F) {
	for _, s := range []string{"pos-1-100", "end-1", "pos-18446744073709551615-9223372036854", "pos-1-9223372036854775807", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if _, pos, ok := parseConfirmName(name); ok && pos < 0 {
			t.Fatalf("%q read as %v", name, pos)
		}
	})
}
