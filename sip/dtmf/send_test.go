package dtmf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// sentPacket is one generated event packet with the RTP fields a sender
// gives it.
type sentPacket struct {
	seq    uint16
	ts     uint32
	marker bool
	end    bool
	code   byte
	vol    byte
	dur    uint16
}

// run drives g as a sender's clock would: one step per packet time, the
// stream's timestamp advancing by step each, sequence numbers on every
// packet (audio in the gaps too); it returns the event packets.
func run(t *testing.T, g *Generator, step uint32, stopAfter int) []sentPacket {
	t.Helper()
	var out []sentPacket
	var seq uint16 = 1000
	var ts, evTS uint32 = 50000, 0
	for n := 0; ; n++ {
		if n == stopAfter {
			g.Stop()
		}
		if n > 10000 {
			t.Fatal("the generator never ends")
		}
		st := g.Next()
		if st.Kind == StepDone {
			return out
		}
		if st.Kind == StepEvent {
			if st.Start {
				evTS = ts
			}
			p := st.Payload
			out = append(out, sentPacket{seq: seq, ts: evTS, marker: st.Start, end: p[1]&0x80 != 0, code: p[0], vol: p[1] & 0x3f, dur: uint16(p[2])<<8 | uint16(p[3])})
		}
		seq++
		ts += step
	}
}

// TestGeneratorEveryDigit pins the packets of each key at 20 ms, 8 kHz,
// 100 ms tone: durations 160..800 growing a packet time each, the end bit
// on the last three at 800, the marker on the first, one timestamp, volume
// 10.
func TestGeneratorEveryDigit(t *testing.T) {
	for i, k := range []byte("0123456789*#ABCDabcd") {
		t.Run(string(k), func(t *testing.T) {
			g, err := NewGenerator(string(k), SendConfig{}, 20*time.Millisecond, 8000)
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, g, 160, -1)
			wantDur := []uint16{160, 320, 480, 640, 800, 800, 800}
			wantCode := i
			if i >= 16 {
				wantCode = i - 4 // a-d are A-D
			}
			if len(got) != len(wantDur) {
				t.Fatalf("%d packets, want %d", len(got), len(wantDur))
			}
			for j, p := range got {
				wantEnd := j >= len(wantDur)-EndRepeats
				if p.dur != wantDur[j] || p.end != wantEnd || p.marker != (j == 0) || p.ts != got[0].ts || p.vol != EventVolume || int(p.code) != wantCode {
					t.Errorf("packet %d = %+v, want dur %d end %v marker %v code %d", j, p, wantDur[j], wantEnd, j == 0, wantCode)
				}
			}
		})
	}
}

// TestGeneratorGapAndTimestamps: two digits 70 ms apart at 20 ms packets:
// 4 gap packet times, the second event's timestamp is the stream's at its
// first packet (7 + 4 packet times after the first's).
func TestGeneratorGapAndTimestamps(t *testing.T) {
	g, err := NewGenerator("19", SendConfig{}, 20*time.Millisecond, 8000)
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, g, 160, -1)
	if len(got) != 14 {
		t.Fatalf("%d packets, want 14", len(got))
	}
	if d := got[7].ts - got[0].ts; d != 11*160 {
		t.Errorf("second event starts %d units after the first, want %d", d, 11*160)
	}
	if d := got[7].seq - got[6].seq; d != 5 {
		t.Errorf("sequence gap %d between the events, want 5 (4 packet times of audio)", d)
	}
}

// TestGeneratorStop: a stop in the middle of a digit sends its three end
// packets at the duration reached, then nothing more. Mutation caught:
// ending at once on Stop (no end packets) leaves the far end's key held.
func TestGeneratorStop(t *testing.T) {
	g, err := NewGenerator("55", SendConfig{}, 20*time.Millisecond, 8000)
	if err != nil {
		t.Fatal(err)
	}
	got := run(t, g, 160, 2)
	if len(got) != 5 {
		t.Fatalf("%d packets, want 2 + 3 end packets: %+v", len(got), got)
	}
	for j, p := range got[2:] {
		if !p.end || p.dur != 320 {
			t.Errorf("end packet %d = %+v, want end at 320", j, p)
		}
	}
	// Stopped in the gap: done at once.
	g, _ = NewGenerator("55", SendConfig{}, 20*time.Millisecond, 8000)
	if got := run(t, g, 160, 8); len(got) != 7 {
		t.Fatalf("stop in the gap: %d packets, want the first digit's 7", len(got))
	}
}

// TestGeneratorRoundTrip: what we send, read back by our own Detector,
// is the same digits with the configured duration, at several packet
// times and clocks.
func TestGeneratorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		ptime time.Duration
		clock int
		dur   time.Duration
	}{
		{20 * time.Millisecond, 8000, 100 * time.Millisecond},
		{30 * time.Millisecond, 8000, 100 * time.Millisecond},
		{20 * time.Millisecond, 48000, 250 * time.Millisecond},
		{10 * time.Millisecond, 16000, 40 * time.Millisecond},
	} {
		digits := "0123456789*#ABCD"
		g, err := NewGenerator(digits, SendConfig{Duration: tc.dur}, tc.ptime, tc.clock)
		if err != nil {
			t.Fatal(err)
		}
		step := uint32(int64(tc.ptime) * int64(tc.clock) / int64(time.Second))
		d, err := New(Config{ClockRate: tc.clock})
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		at := time.Unix(0, 0)
		for _, p := range run(t, g, step, -1) {
			payload := []byte{p.code, p.vol, byte(p.dur >> 8), byte(p.dur)}
			if p.end {
				payload[1] |= 0x80
			}
			out, err := d.Packet(nil, p.seq, p.ts, p.marker, payload, at)
			if err != nil {
				t.Fatal(err)
			}
			for _, press := range out {
				got.WriteByte(press.Digit)
				if press.Duration != tc.dur || press.Source != messages.DTMFRFC4733 {
					t.Errorf("%v: press %+v, want %v", tc, press, tc.dur)
				}
			}
			at = at.Add(tc.ptime)
		}
		if got.String() != digits {
			t.Errorf("%v: read back %q, want %q", tc, got.String(), digits)
		}
		if st := d.Stats(); st.Repeats != uint64(2*len(digits)) || st.Unended != 0 {
			t.Errorf("%v: detector stats %+v", tc, st)
		}
	}
}

func TestGeneratorRefuses(t *testing.T) {
	for _, tc := range []struct {
		digits string
		cfg    SendConfig
		want   error
	}{
		{"", SendConfig{}, ErrInvalidDigits},
		{"12x", SendConfig{}, ErrInvalidDigits},
		{"1\r\n", SendConfig{}, ErrInvalidDigits},
		{strings.Repeat("1", MaxSendDigits+1), SendConfig{}, ErrInvalidDigits},
		{"1", SendConfig{Duration: 10 * time.Millisecond}, ErrInvalidConfig},
		{"1", SendConfig{Duration: 2 * time.Second}, ErrInvalidConfig},
		{"1", SendConfig{Gap: time.Millisecond}, ErrInvalidConfig},
	} {
		if _, err := NewGenerator(tc.digits, tc.cfg, 20*time.Millisecond, 8000); !errors.Is(err, tc.want) {
			t.Errorf("%q %+v: %v, want %v", tc.digits, tc.cfg, err, tc.want)
		}
	}
}

func TestInfoBody(t *testing.T) {
	for _, tc := range []struct {
		digit byte
		dur   time.Duration
		want  string
	}{
		{'5', 100 * time.Millisecond, "Signal=5\r\nDuration=100\r\n"},
		{'*', 250 * time.Millisecond, "Signal=*\r\nDuration=250\r\n"},
		{'#', 0, "Signal=#\r\nDuration=1\r\n"},
		{'d', 40 * time.Millisecond, "Signal=D\r\nDuration=40\r\n"},
	} {
		ct, body := InfoBody(tc.digit, tc.dur)
		if ct != TypeDTMFRelay || string(body) != tc.want {
			t.Errorf("%c: %q %q, want %q", tc.digit, ct, body, tc.want)
		}
		// Our own INFO reader takes it back.
		press, err := ParseInfo(ct, body, time.Time{})
		if err != nil || press.Digit != tc.want[7] {
			t.Errorf("%c: read back %+v, %v", tc.digit, press, err)
		}
	}
	if ct, body := InfoBody('x', time.Second); ct != "" || body != nil {
		t.Errorf("non-key: %q %q", ct, body)
	}
}
