package wscall

import (
	"errors"
	"testing"
	"time"
)

// TestLimitsValidate: bad limits are refused with the carrier's sentinel
// and the text it always had; the zero limits are valid.
// Mutation caught: a check dropped (OutQueue 1, a negative size), the
// carrier's minimum ignored, or the error not wrapping the sentinel.
func TestLimitsValidate(t *testing.T) {
	invalid := errors.New("carrier: invalid config")
	tests := []struct {
		name string
		l    Limits
		want string // "" is valid
	}{
		{"zero", Limits{}, ""},
		{"at the minimum", Limits{MaxMessageBytes: 1024}, ""},
		{"negative idle is no bound", Limits{IdleTimeout: -1, PingInterval: -1}, ""},
		{"small messages", Limits{MaxMessageBytes: 1023}, "carrier: invalid config: MaxMessageBytes must be 0 (default) or at least 1024"},
		{"negative messages", Limits{MaxMessageBytes: -1}, "carrier: invalid config: MaxMessageBytes must be 0 (default) or at least 1024"},
		{"negative write", Limits{WriteTimeout: -time.Second}, "carrier: invalid config: WriteTimeout must not be negative"},
		{"negative in queue", Limits{InQueue: -1}, "carrier: invalid config: sizes must not be negative"},
		{"negative out queue", Limits{OutQueue: -1}, "carrier: invalid config: sizes must not be negative"},
		{"negative marks", Limits{MaxPendingMarks: -1}, "carrier: invalid config: sizes must not be negative"},
		{"negative bad run", Limits{MaxBadMessages: -1}, "carrier: invalid config: sizes must not be negative"},
		{"out queue of one", Limits{OutQueue: 1}, "carrier: invalid config: OutQueue must leave room for a clear"},
		{"negative pong", Limits{PongTimeout: -time.Second}, "carrier: invalid config: PongTimeout must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate(invalid, 1024)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, invalid) || err.Error() != tt.want {
				t.Fatalf("Validate: %v, want %q wrapping the sentinel", err, tt.want)
			}
		})
	}
}

// TestWithDefaults: the zero fields take the defaults and a negative
// IdleTimeout or PingInterval turns the bound off; set fields stay.
// Mutation caught: a field not defaulted (PingInterval: no pings unless
// configured), or a negative bound passed on as it is.
func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Limits
		want Limits
	}{
		{"zero", Limits{}, Limits{MaxMessageBytes: DefaultMaxMessageBytes, IdleTimeout: DefaultIdleTimeout,
			WriteTimeout: DefaultWriteTimeout, InQueue: DefaultInQueue, OutQueue: DefaultOutQueue,
			MaxPendingMarks: DefaultMaxPendingMarks, MaxBadMessages: DefaultMaxBadMessages,
			PingInterval: DefaultPingInterval, PongTimeout: DefaultPongTimeout}},
		{"bounds off", Limits{IdleTimeout: -1, PingInterval: -1}, Limits{MaxMessageBytes: DefaultMaxMessageBytes,
			WriteTimeout: DefaultWriteTimeout, InQueue: DefaultInQueue, OutQueue: DefaultOutQueue,
			MaxPendingMarks: DefaultMaxPendingMarks, MaxBadMessages: DefaultMaxBadMessages, PongTimeout: DefaultPongTimeout}},
		{"set", Limits{MaxMessageBytes: 5000, IdleTimeout: 3, WriteTimeout: 4, InQueue: 5, OutQueue: 6,
			MaxPendingMarks: 7, MaxBadMessages: 8, PingInterval: 9, PongTimeout: 10},
			Limits{MaxMessageBytes: 5000, IdleTimeout: 3, WriteTimeout: 4, InQueue: 5, OutQueue: 6,
				MaxPendingMarks: 7, MaxBadMessages: 8, PingInterval: 9, PongTimeout: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WithDefaults(tt.in); got != tt.want {
				t.Fatalf("WithDefaults(%+v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}
