package agentbuild

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/media/conn"
)

// anyLeadConn is a Conn with an output lead (the SIP and WebRTC
// outputs').
type anyLeadConn struct {
	conn.Conn
	lead time.Duration
}

func (c anyLeadConn) OutputLead() time.Duration { return c.lead }

// TestPacerFor: the pacer's settings per transport. Mutations caught: the
// start lead left at 0 (SIP's first packet waits a frame for the
// prebuffer), the lead not rounded up to a frame (an invalid config for a
// 30 ms packet time), not capped.
func TestPacerFor(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name                      string
		c                         conn.Conn
		margin, start, confirmEvr time.Duration
	}{
		{"no lead (the PCM websocket without echoes)", struct{ conn.Conn }{}, 0, 0, 0},
		{"SIP and WebRTC, 20 ms packets", anyLeadConn{lead: 40 * ms}, 60 * ms, 20 * ms, 0},
		{"SIP, 40 ms packets", anyLeadConn{lead: 60 * ms}, 80 * ms, 40 * ms, 0},
		{"SIP, 30 ms packets", anyLeadConn{lead: 50 * ms}, 70 * ms, 40 * ms, 0},
		{"a lead beyond the cap", anyLeadConn{lead: 300 * ms}, 320 * ms, pacer.MaxStartLead, 0},
		{"a carrier's client", confirmingConn{confirms: true}, 0, 0, ConfirmEvery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PacerFor(tc.c, pacer.Config{Rate: 8000})
			if p.LeadMargin != tc.margin || p.StartLead != tc.start || p.ConfirmEvery != tc.confirmEvr {
				t.Errorf("margin %v, start lead %v, confirm every %v; want %v, %v, %v", p.LeadMargin, p.StartLead, p.ConfirmEvery, tc.margin, tc.start, tc.confirmEvr)
			}
			if err := p.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}
