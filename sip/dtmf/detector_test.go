package dtmf_test

import (
	"errors"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// t0 is the tests' time origin; steps give offsets in milliseconds.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// payload is one RFC 4733 event block.
func payload(code byte, end bool, dur uint16) []byte {
	b := []byte{code, 10, byte(dur >> 8), byte(dur)}
	if end {
		b[1] |= 0x80
	}
	return b
}

// step is one packet fed to the Detector, or (expire) one Expire call.
type step struct {
	seq    uint16
	ts     uint32
	marker bool
	body   []byte // the payload; nil with expire
	at     int    // ms after t0
	expire bool
}

func pkt(seq uint16, ts uint32, marker bool, code byte, end bool, dur uint16, at int) step {
	return step{seq: seq, ts: ts, marker: marker, body: payload(code, end, dur), at: at}
}

func expire(at int) step { return step{expire: true, at: at} }

// press is what a test expects of a reported press.
type press struct {
	digit byte
	dur   time.Duration
	at    int
}

// keyPress is the packets of one sipp-like press: a first packet with the
// marker and duration 0, updates every 20 ms (160 units), three end
// packets; seq and ts as given, starting at ms.
func keyPress(seq uint16, ts uint32, code byte, at int) []step {
	out := []step{pkt(seq, ts, true, code, false, 0, at)}
	for i := 1; i <= 6; i++ {
		out = append(out, pkt(seq+uint16(i), ts, false, code, false, uint16(160*i), at+20*i))
	}
	for range 3 {
		out = append(out, pkt(seq+7, ts, false, code, true, 1120, at+140))
	}
	return out
}

func cat(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// run feeds the steps and returns every press reported, in order.
func run(t *testing.T, d *dtmf.Detector, steps []step) []messages.DTMF {
	t.Helper()
	var got []messages.DTMF
	var buf [2]messages.DTMF
	for i, s := range steps {
		if s.expire {
			if p, ok := d.Expire(ms(s.at)); ok {
				got = append(got, p)
			}
			continue
		}
		out, err := d.Packet(buf[:0], s.seq, s.ts, s.marker, s.body, ms(s.at))
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got = append(got, out...)
	}
	return got
}

func check(t *testing.T, got []messages.DTMF, want []press) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d presses %v, want %d %v", len(got), got, len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.Digit != w.digit || g.Duration != w.dur || !g.At.Equal(ms(w.at)) || g.Source != messages.DTMFRFC4733 {
			t.Errorf("press %d: %q %v at %v (%s), want %q %v at +%d ms", i, g.Digit, g.Duration, g.At.Sub(t0), g.Source, w.digit, w.dur, w.at)
		}
	}
}

// TestDetector is the Detector's rules, one case each. Each case names the
// mutation it catches.
func TestDetector(t *testing.T) {
	const d140 = 140 * time.Millisecond // 1120 units at 8 kHz
	cases := []struct {
		name  string
		cfg   dtmf.Config
		steps []step
		want  []press
		stats dtmf.Stats // the non-zero counters to check (Packets always)
	}{
		{
			// Mutation: dropping a first packet of duration 0 (diago's
			// bug) still reports, but At moves to the second packet.
			name:  "a sipp press: zero-duration start, three ends, one press",
			steps: keyPress(100, 8000, 5, 0),
			want:  []press{{'5', d140, 0}},
			stats: dtmf.Stats{Packets: 10, Presses: 1, Repeats: 2},
		},
		{
			// Mutation: counting each end packet gives three presses.
			name: "three end packets count once",
			steps: []step{
				pkt(1, 800, true, 1, true, 400, 0), pkt(1, 800, false, 1, true, 400, 1), pkt(1, 800, false, 1, true, 400, 2),
			},
			want:  []press{{'1', 50 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 3, Presses: 1, Repeats: 2},
		},
		{
			// Mutation: requiring the marker bit (or a non-end first
			// packet) to start an event loses this press.
			name: "start lost: end packets only are one press",
			steps: []step{
				pkt(7, 1600, false, 9, true, 800, 30), pkt(7, 1600, false, 9, true, 800, 31), pkt(7, 1600, false, 9, true, 800, 32),
			},
			want:  []press{{'9', 100 * time.Millisecond, 30}},
			stats: dtmf.Stats{Packets: 3, Presses: 1, Repeats: 2},
		},
		{
			// Mutation: an Expire that never fires reports nothing (when it
			// fires is TestExpireBoundary's).
			name: "no end packet: reported 500 ms after the last packet",
			steps: []step{
				pkt(1, 800, true, 2, false, 0, 0), pkt(2, 800, false, 2, false, 160, 20),
				expire(519), expire(520), expire(900),
			},
			want:  []press{{'2', 20 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 2, Presses: 1, Expired: 1},
		},
		{
			// Mutation: ignoring EndTimeout (always the default) expires at
			// 20+500 instead of 20+100.
			name: "a configured end timeout",
			cfg:  dtmf.Config{EndTimeout: 100 * time.Millisecond},
			steps: []step{
				pkt(1, 800, true, 2, false, 0, 0), pkt(2, 800, false, 2, false, 160, 20),
				expire(119), expire(120),
			},
			want:  []press{{'2', 20 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 2, Presses: 1, Expired: 1},
		},
		{
			// Mutation: dropping an unended event when the next begins
			// loses the '3'.
			name: "no end packet: the next event reports it first",
			steps: cat(
				[]step{pkt(1, 800, true, 3, false, 0, 0), pkt(2, 800, false, 3, false, 320, 40)},
				keyPress(3, 4000, 4, 100),
			),
			want:  []press{{'3', 40 * time.Millisecond, 0}, {'4', d140, 100}},
			stats: dtmf.Stats{Packets: 12, Presses: 2, Unended: 1, Repeats: 2},
		},
		{
			// Mutation: a Packet that returns one press at most loses one
			// here (the unended '3' and the end-only '6' in one packet).
			name: "one packet ends two presses",
			steps: []step{
				pkt(1, 800, true, 3, false, 0, 0),
				pkt(2, 4000, false, 6, true, 480, 100),
			},
			want:  []press{{'3', 0, 0}, {'6', 60 * time.Millisecond, 100}},
			stats: dtmf.Stats{Packets: 2, Presses: 2, Unended: 1},
		},
		{
			// Mutation: treating a late packet of an ended event as a new
			// event reports a second '1'.
			name: "a late packet of the previous event is ignored",
			steps: cat(
				keyPress(10, 800, 1, 0),
				[]step{pkt(20, 4000, true, 2, false, 0, 200), pkt(16, 800, false, 1, false, 960, 201)},
				[]step{pkt(21, 4000, false, 2, true, 800, 300)},
			),
			want:  []press{{'1', d140, 0}, {'2', 100 * time.Millisecond, 200}},
			stats: dtmf.Stats{Packets: 13, Presses: 2, Repeats: 2, Late: 1},
		},
		{
			// Mutation: forgetting ended events' timestamps takes this late
			// end packet of '0', which arrives after sipp's jump back to
			// '1''s sequence numbers, for a new press.
			name: "a late packet of the previous event after a sequence jump",
			steps: cat(
				keyPress(12080, 17632, 0, 0),
				[]step{pkt(7984, 13280, true, 1, false, 0, 1000), pkt(12087, 17632, false, 0, true, 1120, 1001)},
				[]step{pkt(7985, 13280, false, 1, true, 160, 1020)},
			),
			want:  []press{{'0', d140, 0}, {'1', 20 * time.Millisecond, 1000}},
			stats: dtmf.Stats{Packets: 13, Presses: 2, Repeats: 2, Late: 1},
		},
		{
			// Mutation: without the sequence window, a reordered packet of
			// an event never seen starts a press, out of order.
			name: "a reordered packet of an older unseen event is ignored",
			steps: []step{
				pkt(50, 9600, true, 7, false, 0, 0),
				pkt(48, 8000, false, 8, true, 800, 5), // 2 behind, older ts
				pkt(51, 9600, false, 7, true, 320, 40),
			},
			want:  []press{{'7', 40 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 3, Presses: 1, Late: 1},
		},
		{
			// Mutation: an unbounded "behind" test (any older seq and ts is
			// late) drops the second press of sipp's recordings.
			name: "a sequence and timestamp jump backwards between presses",
			steps: cat(
				keyPress(12080, 17632, 0, 0),
				keyPress(7984, 13280, 1, 1000),
			),
			want:  []press{{'0', d140, 0}, {'1', d140, 1000}},
			stats: dtmf.Stats{Packets: 20, Presses: 2, Repeats: 4},
		},
		{
			name: "a sequence jump forward between presses",
			steps: cat(
				keyPress(10, 800, 1, 0),
				keyPress(40000, 900000, 2, 1000),
			),
			want:  []press{{'1', d140, 0}, {'2', d140, 1000}},
			stats: dtmf.Stats{Packets: 20, Presses: 2, Repeats: 4},
		},
		{
			// Mutation: comparing sequence numbers or timestamps without
			// serial arithmetic takes the second press as late.
			name: "sequence numbers and timestamps wrapping",
			steps: cat(
				keyPress(65530, 4294966000, 1, 0),
				keyPress(4, 1000, 2, 300),
			),
			want:  []press{{'1', d140, 0}, {'2', d140, 300}},
			stats: dtmf.Stats{Packets: 20, Presses: 2, Repeats: 4},
		},
		{
			// Mutation: reporting events from 16 on gives a press with a
			// zero digit; a Deadline for them makes Expire report one.
			name: "a flash (event 16) is counted, not reported",
			steps: []step{
				pkt(1, 800, true, 16, false, 0, 0), pkt(2, 800, false, 16, true, 800, 100),
				pkt(3, 1600, true, 200, false, 0, 200),
			},
			stats: dtmf.Stats{Packets: 3, NonKey: 2},
		},
		{
			// Mutation: no segment join reports a long press twice.
			name: "a long press in two segments is one press",
			steps: []step{
				pkt(1, 0, true, 5, false, 0, 0),
				pkt(2, 0, false, 5, false, 0xFFFF, 100), // the times need not match
				pkt(3, 0xFFFF, false, 5, false, 800, 200),
				pkt(4, 0xFFFF, false, 5, true, 1600, 300),
			},
			want:  []press{{'5', time.Duration(0xFFFF+1600) * time.Second / 8000, 0}},
			stats: dtmf.Stats{Packets: 4, Presses: 1, Segments: 1},
		},
		{
			// Mutation: no cap reports 6.6 days here (and enough segments
			// would overflow the Duration into a negative one).
			name: "a chain of segments is capped at an hour",
			steps: func() []step {
				out := []step{pkt(1, 0, true, 5, false, 0xFFFF, 0)}
				ts := uint32(0)
				for i := range 70000 { // 70000 * 0xFFFF units is over 6 days at 8 kHz
					ts += 0xFFFF
					out = append(out, pkt(uint16(i+2), ts, false, 5, false, 0xFFFF, i+1))
				}
				return append(out, pkt(2, ts, false, 5, true, 0xFFFF, 70001))
			}(),
			want:  []press{{'5', dtmf.MaxPressDuration, 0}},
			stats: dtmf.Stats{Packets: 70002, Presses: 1, Segments: 70000},
		},
		{
			// Mutation: without the restart rule, sipp playing the same
			// recording twice gives one press; a restart rule that ignores
			// the marker or the pause counts real duplicates.
			name: "the same recording twice, after a pause, is two presses",
			steps: cat(
				keyPress(10, 800, 4, 0),
				keyPress(10, 800, 4, 1000),
				[]step{pkt(10, 800, true, 4, false, 0, 1200)},    // a marker, but too soon
				[]step{pkt(17, 800, false, 4, true, 1120, 1900)}, // a late duplicate, no marker
			),
			want:  []press{{'4', d140, 0}, {'4', d140, 1000}},
			stats: dtmf.Stats{Packets: 22, Presses: 2, Repeats: 6},
		},
		{
			// Mutation: a Packet that does not expire a due press first
			// takes the replay of the same timestamp for the unended press
			// itself: one '8' instead of two.
			name: "a press due before a packet is expired first",
			steps: cat(
				[]step{pkt(1, 800, true, 8, false, 0, 0)},
				keyPress(1, 800, 8, 2000),
			),
			want:  []press{{'8', 0, 0}, {'8', d140, 2000}},
			stats: dtmf.Stats{Packets: 11, Presses: 2, Expired: 1, Repeats: 2},
		},
		{
			// Mutation: a hard-coded 8 kHz clock gives 140 ms here.
			name:  "duration at a 16 kHz clock",
			cfg:   dtmf.Config{ClockRate: 16000},
			steps: keyPress(1, 16000, 11, 0),
			want:  []press{{'#', 70 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 10, Presses: 1, Repeats: 2},
		},
		{
			// Mutation: using the first block of a packed payload reports
			// the old event's code '1' instead of the packet's '2'.
			name: "a packed payload: the last block is the packet's event",
			steps: []step{
				{seq: 1, ts: 800, marker: true, body: append(payload(1, true, 800), payload(2, true, 320)...), at: 0},
			},
			want:  []press{{'2', 40 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 1, Presses: 1, Packed: 1},
		},
		{
			// Mutation: a marker bit taken as a new event counts this press
			// twice.
			name: "a marker repeated within an event",
			steps: []step{
				pkt(1, 800, true, 0, false, 0, 0), pkt(2, 800, true, 0, false, 160, 20), pkt(3, 800, false, 0, true, 320, 40),
			},
			want:  []press{{'0', 40 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 3, Presses: 1},
		},
		{
			// Mutation: taking the last duration instead of the largest
			// gives 20 ms (a reordered update after the end).
			name: "the duration is the largest seen",
			steps: []step{
				pkt(1, 800, true, 0, false, 0, 0), pkt(3, 800, false, 0, false, 480, 60), pkt(2, 800, false, 0, false, 160, 61),
				expire(1000),
			},
			want:  []press{{'0', 60 * time.Millisecond, 0}},
			stats: dtmf.Stats{Packets: 3, Presses: 1, Expired: 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := dtmf.New(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			check(t, run(t, d, c.steps), c.want)
			if got := d.Stats(); got != c.stats {
				t.Errorf("stats %+v, want %+v", got, c.stats)
			}
			if _, waiting := d.Deadline(); waiting {
				t.Errorf("a deadline left after the last step: every case ends with its presses reported")
			}
		})
	}
}

// TestEventKeys maps every event code to its key.
// Mutation caught: a wrong order of "*#ABCD" in the key table.
func TestEventKeys(t *testing.T) {
	const keys = "0123456789*#ABCD"
	for code := range 16 {
		d, _ := dtmf.New(dtmf.Config{})
		var buf [2]messages.DTMF
		out, err := d.Packet(buf[:0], 1, 800, true, payload(byte(code), true, 160), t0)
		if err != nil || len(out) != 1 || out[0].Digit != keys[code] {
			t.Errorf("event %d: %v %v, want %q", code, out, err, keys[code])
		}
	}
}

// TestMalformedPayload refuses payloads that are not whole event blocks.
// Mutation caught: a length check of < 4 only (5 bytes accepted) or none
// (an index out of range on 3 bytes).
func TestMalformedPayload(t *testing.T) {
	for _, n := range []int{0, 1, 3, 5, 7, 9} {
		d, _ := dtmf.New(dtmf.Config{})
		out, err := d.Packet(nil, 1, 800, true, make([]byte, n), t0)
		if !errors.Is(err, dtmf.ErrMalformedPayload) || len(out) != 0 {
			t.Errorf("%d bytes: %v %v, want ErrMalformedPayload", n, out, err)
		}
		if s := d.Stats(); s.Malformed != 1 || s.Packets != 0 {
			t.Errorf("%d bytes: stats %+v", n, s)
		}
	}
}

// TestConfig checks the defaults and the bounds.
func TestConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  dtmf.Config
		ok   bool
	}{
		{"zero is the defaults", dtmf.Config{}, true},
		{"48 kHz", dtmf.Config{ClockRate: 48000}, true},
		{"clock too slow", dtmf.Config{ClockRate: 100}, false},
		{"clock too fast", dtmf.Config{ClockRate: 1 << 20}, false},
		{"negative clock", dtmf.Config{ClockRate: -8000}, false},
		{"negative timeout", dtmf.Config{EndTimeout: -time.Second}, false},
		{"timeout too long", dtmf.Config{EndTimeout: time.Minute}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, dtmf.ErrInvalidConfig)) {
				t.Fatalf("Validate = %v, want ok %v", err, c.ok)
			}
			if _, err := dtmf.New(c.cfg); (err == nil) != c.ok {
				t.Fatalf("New = %v, want ok %v", err, c.ok)
			}
		})
	}
}

// TestExpireBoundary pins when an unended press is due: Deadline is
// EndTimeout after the latest packet, Expire reports nothing a millisecond
// before it and the press at it, once.
// Mutation caught: an Expire or a Deadline off by the refresh (counting
// from the first packet) or firing early (a deadline minus a margin).
func TestExpireBoundary(t *testing.T) {
	for _, timeout := range []time.Duration{0, 100 * time.Millisecond, 2 * time.Second} {
		d, err := dtmf.New(dtmf.Config{EndTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		if timeout == 0 {
			timeout = dtmf.DefaultEndTimeout
		}
		last := ms(20)
		d.Packet(nil, 1, 800, true, payload(3, false, 0), ms(0))
		d.Packet(nil, 2, 800, false, payload(3, false, 160), last)
		due, waiting := d.Deadline()
		if !waiting || !due.Equal(last.Add(timeout)) {
			t.Fatalf("timeout %v: Deadline %v %v, want %v", timeout, due.Sub(t0), waiting, last.Add(timeout).Sub(t0))
		}
		if p, ok := d.Expire(due.Add(-time.Millisecond)); ok {
			t.Fatalf("timeout %v: %v reported a millisecond early", timeout, p)
		}
		if p, ok := d.Expire(due); !ok || p.Digit != '3' {
			t.Fatalf("timeout %v: Expire at the deadline = %v %v", timeout, p, ok)
		}
		if p, ok := d.Expire(due.Add(time.Hour)); ok {
			t.Fatalf("timeout %v: %v reported twice", timeout, p)
		}
		if _, waiting := d.Deadline(); waiting {
			t.Fatalf("timeout %v: a deadline after the press", timeout)
		}
	}
}
