package sip_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	sipmsg "github.com/emiago/sipgo/sip"
)

// TestEarlyKeysDelivered: a caller presses keys (SIP INFO) as soon as it
// sent the ACK, before the call's stages registered their receiver: the
// first receiver gets them, in order; beyond the bound of 16 they are
// counted undelivered. Mutation caught (seen failing): presses with no
// receiver dropped (what `brisvox serve` did: the first key of a caller
// quick on the keypad was lost, 0 delivered here).
func TestEarlyKeysDelivered(t *testing.T) {
	tests := []struct {
		name        string
		keys        string
		delivered   string
		undelivered uint64
	}{
		{"a pin", "9731#", "9731#", 0},
		{"past the bound", "01234567890123456789", "0123456789012345", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHostile(t, nil)
			p := dial(t, "udp", h.udp.Addr(), h.udp)
			res := h.answer(t, p, "call-keys", offerSDP, 200)
			h.inDialog(t, p, res, "ACK", 1)
			c := h.took(t)
			defer c.Close()
			for i, k := range tt.keys {
				body := fmt.Sprintf("Signal=%c\r\nDuration=160\r\n", k)
				msg := request(p, "INFO", "sip:bot@"+h.udp.String(), "call-keys", 2+i,
					"From: "+res.From().Value(), "To: "+res.To().Value())
				msg = msg[:len(msg)-len("Content-Length: 0\r\n\r\n")] +
					fmt.Sprintf("Content-Type: application/dtmf-relay\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				if err := p.send([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				if r := p.response("call-keys", 5*time.Second); r == nil || r.StatusCode != 200 || r.CSeq().MethodName != sipmsg.INFO {
					t.Fatalf("INFO %c answered %v", k, r)
				}
			}
			var mu sync.Mutex
			var got []byte
			c.OnDTMF(func(d messages.DTMF) {
				mu.Lock()
				got = append(got, d.Digit)
				mu.Unlock()
			})
			mu.Lock()
			keys := string(got)
			mu.Unlock()
			if keys != tt.delivered {
				t.Errorf("delivered %q, want %q", keys, tt.delivered)
			}
			if n := h.srv.Stats()["dtmf_undelivered"]; n != tt.undelivered {
				t.Errorf("dtmf_undelivered = %d, want %d", n, tt.undelivered)
			}
			h.inDialog(t, p, res, "BYE", 100)
		})
	}
}
