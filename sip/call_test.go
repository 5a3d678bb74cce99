package sip

import (
	"errors"
	"fmt"
	"testing"

	"github.com/brisvox/brisvox/actors/transport"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
)

// TestEndError: the end reason of a call whose media ended after its
// dialog did. Mutation caught (seen failing): endError returning err
// unchanged (a session timer's expiry ended the call "hangup").
func TestEndError(t *testing.T) {
	closed := fmt.Errorf("%w: %w", transport.ErrClosed, rtp.ErrClosed)
	tests := []struct {
		name  string
		cause error
		want  string
	}{
		{"remote bye", signal.ErrRemoteBye, transport.ReasonHangup},
		{"our hangup", fmt.Errorf("%w: %w", signal.ErrLocalHangup, ErrHangup), transport.ReasonHangup},
		{"session timer expired", signal.ErrSessionExpired, transport.ReasonVanished},
		{"refresh unanswered", fmt.Errorf("%w: refresh: %w", signal.ErrSessionExpired, signal.ErrTransport), transport.ReasonVanished},
		{"server closed", signal.ErrServerClosed, transport.ReasonHangup},
		{"no cause", nil, transport.ReasonHangup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := endError(closed, tt.cause)
			if !errors.Is(err, transport.ErrClosed) {
				t.Fatalf("%v does not wrap transport.ErrClosed", err)
			}
			if got := transport.ReasonOf(err); got != tt.want {
				t.Errorf("ReasonOf = %q, want %q", got, tt.want)
			}
		})
	}
}
