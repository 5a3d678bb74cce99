package dtmf_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// FuzzPacket feeds a stream of telephone-event packets made from the input
// (each: 2 bytes seq, 4 ts, 1 marker and payload length, 2 ms of arrival
// gap, then the payload) and checks the Detector's invariants: no panic,
// at most two presses per packet, every press a key of this source with a
// duration the duration field can give, presses counted as returned, no
// more presses than events, and nothing left due after a final Expire.
func FuzzPacket(f *testing.F) {
	f.Add([]byte{})
	f.Add(streamOf(
		fpkt{1, 800, true, 0, []byte{5, 10, 0, 0}},
		fpkt{2, 800, false, 20, []byte{5, 0x8a, 0, 160}},
		fpkt{2, 800, false, 0, []byte{5, 0x8a, 0, 160}},
	))
	f.Add(streamOf(
		fpkt{12087, 17632, false, 0, []byte{0, 0x8a, 8, 0xc0}},
		fpkt{7984, 13280, true, 1000, []byte{1, 10, 0, 0}},
		fpkt{12087, 17632, false, 1, []byte{0, 0x8a, 8, 0xc0}},
		fpkt{7985, 13280, false, 900, []byte{16, 0x8a, 0xff, 0xff, 1, 0, 0, 0}},
	))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := dtmf.New(dtmf.Config{})
		if err != nil {
			t.Fatal(err)
		}
		at := t0
		var buf [2]messages.DTMF
		presses, starts := 0, 0
		for len(data) >= 9 {
			seq := binary.BigEndian.Uint16(data)
			ts := binary.BigEndian.Uint32(data[2:])
			marker := data[6]&0x80 != 0
			n := min(int(data[6]&0x7f), len(data)-9)
			at = at.Add(time.Duration(binary.BigEndian.Uint16(data[7:])) * time.Millisecond)
			pl := data[9 : 9+n]
			data = data[9+n:]
			out, err := d.Packet(buf[:0], seq, ts, marker, pl, at)
			if err != nil && !errors.Is(err, dtmf.ErrMalformedPayload) {
				t.Fatalf("error %v", err)
			}
			if err == nil {
				starts++ // a packet can start at most one event
			}
			if len(out) > 2 {
				t.Fatalf("%d presses from one packet", len(out))
			}
			presses += checkPresses(t, out)
		}
		if p, ok := d.Expire(at.Add(time.Hour)); ok {
			presses += checkPresses(t, []messages.DTMF{p})
		}
		if _, waiting := d.Deadline(); waiting {
			t.Fatal("a deadline left after Expire an hour later")
		}
		s := d.Stats()
		if s.Presses != uint64(presses) || presses > starts {
			t.Fatalf("%d presses returned, %d counted, %d packets", presses, s.Presses, starts)
		}
	})
}

func checkPresses(t *testing.T, ps []messages.DTMF) int {
	t.Helper()
	for _, p := range ps {
		if !messages.ValidDTMFDigit(p.Digit) || p.Source != messages.DTMFRFC4733 || p.Duration < 0 {
			t.Fatalf("bad press %+v", p)
		}
	}
	return len(ps)
}

// fpkt is one packet of a FuzzPacket seed.
type fpkt struct {
	seq     uint16
	ts      uint32
	marker  bool
	gapMS   uint16
	payload []byte
}

// streamOf encodes packets in FuzzPacket's input format.
func streamOf(ps ...fpkt) []byte {
	var out []byte
	for _, p := range ps {
		var h [9]byte
		binary.BigEndian.PutUint16(h[:], p.seq)
		binary.BigEndian.PutUint32(h[2:], p.ts)
		h[6] = byte(len(p.payload))
		if p.marker {
			h[6] |= 0x80
		}
		binary.BigEndian.PutUint16(h[7:], p.gapMS)
		out = append(append(out, h[:]...), p.payload...)
	}
	return out
}

// fuzzInfo checks ParseInfo's contract on one input: a press is a key of
// the SIP INFO source with a bounded duration and the given time; an error
// wraps one of the sentinels and comes with no press.
func fuzzInfo(t *testing.T, ctype string, body []byte) {
	got, err := dtmf.ParseInfo(ctype, body, t0)
	if err != nil {
		if got != (messages.DTMF{}) {
			t.Fatalf("a press %+v with %v", got, err)
		}
		for _, s := range []error{dtmf.ErrMalformedBody, dtmf.ErrBodyTooLarge, dtmf.ErrUnknownKey, dtmf.ErrUnsupportedType} {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("an error of no sentinel: %v", err)
	}
	if !messages.ValidDTMFDigit(got.Digit) || got.Source != messages.DTMFSIPInfo || !got.At.Equal(t0) ||
		got.Duration < 0 || got.Duration > dtmf.MaxInfoDuration || len(body) > dtmf.MaxInfoBody {
		t.Fatalf("bad press %+v from %q", got, body)
	}
}

// FuzzDTMFRelay fuzzes application/dtmf-relay bodies.
func FuzzDTMFRelay(f *testing.F) {
	for _, s := range []string{"Signal=5\r\nDuration=160\r\n", "signal = 10\n", "Signal=!\r\n", "Duration=1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { fuzzInfo(t, dtmf.TypeDTMFRelay, body) })
}

// FuzzDTMFBody fuzzes application/dtmf bodies.
func FuzzDTMFBody(f *testing.F) {
	for _, s := range []string{"5", " #\r\n", "11", "!"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { fuzzInfo(t, dtmf.TypeDTMF, body) })
}

// FuzzInfoContentType fuzzes the Content-Type with a fixed valid body.
func FuzzInfoContentType(f *testing.F) {
	for _, s := range []string{dtmf.TypeDTMF, "Application/DTMF-Relay; charset=x", "text/plain", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ctype string) { fuzzInfo(t, ctype, []byte("Signal=1\r\n")) })
}
