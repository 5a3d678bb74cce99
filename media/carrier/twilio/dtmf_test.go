package twilio

import (
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/messages"
)

// TestDTMFEvents: each dtmf event whose digit is one DTMF key reaches the
// receiver as one messages.DTMF from the carrier, in order; an empty,
// doubled or foreign digit is counted "dtmf_invalid" and dropped, and
// after OnDTMF(nil) nothing is handed on. Mutations caught (each seen
// failing): the digit check reduced to "not empty" (the "55", "x" and
// "E" presses handed on), the carrier source not set, OnDTMF(nil) not
// unregistering.
func TestDTMFEvents(t *testing.T) {
	cases := []struct {
		name    string
		sent    []string
		want    string
		invalid uint64
	}{
		{name: "keys", sent: []string{"4", "2", "#", "*", "0", "9", "A", "D"}, want: "42#*09AD"},
		{name: "invalid dropped", sent: []string{"1", "", "55", "x", "E", "2"}, want: "12", invalid: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, Config{}, func(r *rig) {
				f, call := r.open()
				got := make(chan messages.DTMF, len(tc.sent))
				call.OnDTMF(func(d messages.DTMF) { got <- d })
				for _, d := range tc.sent {
					f.dtmf(d)
				}
				synctest.Wait() // the stream's reader has taken every event
				var keys []byte
				for len(got) > 0 {
					d := <-got
					if d.Source != messages.DTMFCarrier || d.At.IsZero() {
						t.Fatalf("key press %+v", d)
					}
					keys = append(keys, d.Digit)
				}
				if string(keys) != tc.want {
					t.Fatalf("keys %q, want %q", keys, tc.want)
				}
				st := r.h.Stats()
				if st["dtmf"] != uint64(len(tc.want)) || st["dtmf_invalid"] != tc.invalid {
					t.Fatalf("dtmf %d, dtmf_invalid %d; want %d, %d", st["dtmf"], st["dtmf_invalid"], len(tc.want), tc.invalid)
				}

				call.OnDTMF(nil)
				f.dtmf("7")
				f.stop()
				f.readClose()
				<-call.Done()
				if len(got) != 0 {
					t.Fatalf("a key press after OnDTMF(nil) was handed on")
				}
			})
		})
	}
}
