package twilio

import (
	"encoding/json"
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

// FuzzDTMFEvent: for a dtmf event with any digit string, the key taken
// is the digit exactly when encoding/json reads the digit as one DTMF
// key, and nothing otherwise; Parse never panics. Mutation caught (seen
// failing): dtmfKey taking the first byte of a longer digit.
func FuzzDTMFEvent(f *testing.F) {
	for _, s := range []string{"4", "#", "*", "A", "D", "", "55", "x", "E", "\x00", "\u0034", "ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, digit string) {
		data, err := json.Marshal(map[string]any{"event": "dtmf", "streamSid": testStreamSID,
			"dtmf": map[string]string{"track": "inbound_track", "digit": digit}})
		if err != nil {
			t.Skip()
		}
		m := &Message{}
		if err := m.Parse(data); err != nil {
			t.Fatalf("a dtmf event does not parse: %v", err)
		}
		var o oracle
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatal(err)
		}
		key, ok := dtmfKey(m.DTMF.Digit)
		want := len(o.DTMF.Digit) == 1 && messages.ValidDTMFDigit(o.DTMF.Digit[0])
		if ok != want || (ok && key != o.DTMF.Digit[0]) {
			t.Fatalf("digit %q: key %q ok %v, want ok %v", o.DTMF.Digit, key, ok, want)
		}
	})
}
