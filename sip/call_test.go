package sip

import (
	"errors"
	"fmt"
	"testing"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
)

// TestEndError: the end reason of a call whose media ended after its
// dialog did. Mutation caught (seen failing): endError returning err
// unchanged (a session timer's expiry ended the call "hangup").
func TestEndError(t *testing.T) {
	closed := fmt.Errorf("%w: %w", conn.ErrClosed, rtp.ErrClosed)
	tests := []struct {
		name  string
		cause error
		want  string
	}{
		{"remote bye", signal.ErrRemoteBye, conn.ReasonHangup},
		{"our hangup", fmt.Errorf("%w: %w", signal.ErrLocalHangup, ErrHangup), conn.ReasonHangup},
		{"session timer expired", signal.ErrSessionExpired, conn.ReasonVanished},
		{"refresh unanswered", fmt.Errorf("%w: refresh: %w", signal.ErrSessionExpired, signal.ErrTransport), conn.ReasonVanished},
		{"server closed", signal.ErrServerClosed, conn.ReasonHangup},
		{"no cause", nil, conn.ReasonHangup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := endError(closed, tt.cause)
			if !errors.Is(err, conn.ErrClosed) {
				t.Fatalf("%v does not wrap conn.ErrClosed", err)
			}
			if got := conn.ReasonOf(err); got != tt.want {
				t.Errorf("ReasonOf = %q, want %q", got, tt.want)
			}
		})
	}
}
