package sip

import (
	"errors"
	"testing"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/rtp"
)

// TestTrunkModes: how a call's keys go out for each trunk DTMF mode and
// whether the far end negotiated telephone-event. Mutations caught (seen
// failing): rfc4733 without telephone-event falling back to INFO (the
// trunk said events only: the error row gets "info"); info sending events
// when negotiated (the row "info with events" gets "rfc4733").
func TestTrunkModes(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		events  bool
		want    string
		wantErr error
	}{
		{"auto with events", DTMFAuto, true, dtmfEvents, nil},
		{"auto without events", DTMFAuto, false, dtmfINFO, nil},
		{"unset is auto", "", true, dtmfEvents, nil},
		{"rfc4733 with events", DTMFRFC4733, true, dtmfEvents, nil},
		{"rfc4733 without events", DTMFRFC4733, false, "", conn.ErrNotSupported},
		{"info with events", DTMFInfo, true, dtmfINFO, nil},
		{"info without events", DTMFInfo, false, dtmfINFO, nil},
		{"unknown mode", "sms", true, "", ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dtmfWay(tt.mode, tt.events)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("dtmfWay(%q, %v) = %q, %v; want %q, %v", tt.mode, tt.events, got, err, tt.want, tt.wantErr)
			}
			if tt.wantErr == conn.ErrNotSupported && !errors.Is(err, rtp.ErrNoTelephoneEvent) {
				t.Errorf("%v does not wrap rtp.ErrNoTelephoneEvent", err)
			}
		})
	}
}
