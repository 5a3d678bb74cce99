package dtmf_test

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// pressPackets is a cycle of sipp-like presses (10 packets each) with
// fresh timestamps and sequence numbers, for the allocation and speed
// checks.
type pressPackets struct {
	seq uint16
	ts  uint32
	i   int
	at  time.Time
	pl  [4]byte
}

func (p *pressPackets) feed(d *dtmf.Detector, buf []messages.DTMF) []messages.DTMF {
	k := p.i % 10
	if k == 0 {
		p.ts += 8000
	}
	end := k >= 7
	dur := uint16(min(k, 7) * 160)
	p.pl = [4]byte{byte(p.i / 10 % 12), 10, byte(dur >> 8), byte(dur)}
	if end {
		p.pl[1] |= 0x80
	}
	if k <= 7 {
		p.seq++
	}
	p.at = p.at.Add(20 * time.Millisecond)
	p.i++
	out, _ := d.Packet(buf, p.seq, p.ts, k == 0, p.pl[:], p.at)
	return out
}

// TestNoAllocsPerPacket pins Packet (all kinds: start, update, end,
// repeats), Expire, Stats and ParseInfo at zero allocations.
// Mutation caught: a press slice made per call, an error built on the
// success path, a body copied or split into strings.
func TestNoAllocsPerPacket(t *testing.T) {
	d, err := dtmf.New(dtmf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var buf [2]messages.DTMF
	p := &pressPackets{at: t0}
	presses := 0
	if a := testing.AllocsPerRun(1000, func() { presses += len(p.feed(d, buf[:0])) }); a != 0 {
		t.Errorf("Packet: %.2f allocations per packet, want 0", a)
	}
	if presses < 90 {
		t.Fatalf("only %d presses in 1000 packets: the loop is not feeding presses", presses)
	}
	if a := testing.AllocsPerRun(100, func() { d.Expire(p.at); _ = d.Stats() }); a != 0 {
		t.Errorf("Expire and Stats: %.2f allocations, want 0", a)
	}
	body := []byte("Signal=5\r\nDuration=160\r\n")
	if a := testing.AllocsPerRun(100, func() {
		if _, err := dtmf.ParseInfo("application/dtmf-relay", body, t0); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("ParseInfo: %.2f allocations, want 0", a)
	}
}

// BenchmarkPacket is one telephone-event packet through the Detector.
func BenchmarkPacket(b *testing.B) {
	d, _ := dtmf.New(dtmf.Config{})
	var buf [2]messages.DTMF
	p := &pressPackets{at: t0}
	b.ReportAllocs()
	for b.Loop() {
		p.feed(d, buf[:0])
	}
}

// BenchmarkParseInfo is one dtmf-relay body.
func BenchmarkParseInfo(b *testing.B) {
	body := []byte("Signal=5\r\nDuration=160\r\n")
	b.ReportAllocs()
	for b.Loop() {
		dtmf.ParseInfo(dtmf.TypeDTMFRelay, body, t0)
	}
}
