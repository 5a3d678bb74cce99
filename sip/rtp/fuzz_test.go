package rtp

import (
	"net/netip"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media"
)

// fuzzInbound is an inbound state as Start leaves it: PCMU with
// telephone-event 101, learning from peerRTP, symmetric RTP as given.
func fuzzInbound(t testing.TB, symmetric bool) *inbound {
	in := &inbound{latch: newLatch(2, 4, symmetric), stats: &counters{}, ourSSRC: 0x1234, ourClock: 8000,
		onEvent: func(uint16, uint32, bool, []byte, time.Time) {}}
	p := pcmuParams().withDefaults()
	dec, _ := newDecoder(p, 8000)
	if err := in.configure(p, media.JitterConfig{}, dec.samples, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	return in
}

// fuzzSources are the sources a fuzzed datagram may come from.
var fuzzSources = [...]netip.AddrPort{peerRTP, peerRTCP, peerOther, attacker, netip.MustParseAddrPort("[::ffff:10.0.0.2]:30000")}

// FuzzInbound feeds datagrams from several sources through the inbound
// path (RTP parse, latch, demux, jitter buffer) and playout pops: it never
// panics, a lock is only ever on the signalled address (symmetric RTP
// off), and every datagram is counted once.
func FuzzInbound(f *testing.F) {
	f.Add(rtpPacket(0, 1, 160, 7, true, make([]byte, 160)), byte(0), false)
	f.Add(rtpPacket(101, 1, 160, 7, true, []byte{1, 0x80, 0, 160}), byte(0), false)
	f.Add(rtpPacket(13, 1, 160, 7, false, []byte{0x40}), byte(3), false)
	f.Add([]byte{0x81, 0xc8, 0x00, 0x06, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, byte(1), true)
	f.Add([]byte{0xff, 0xff}, byte(2), false)
	f.Fuzz(func(t *testing.T, data []byte, src byte, rtcpSocket bool) {
		in := fuzzInbound(t, false)
		now := time.Unix(0, 0)
		// The datagram several times, with the sequence number stepped,
		// so that a valid packet can complete the latch run.
		for i := range 4 {
			b := append([]byte(nil), data...)
			if len(b) >= 4 {
				b[3] += byte(i)
			}
			from := fuzzSources[(int(src)+i/3)%len(fuzzSources)]
			in.receive(b, from, now, rtcpSocket)
			in.jb.Pop(now)
			now = now.Add(20 * time.Millisecond)
		}
		if in.latch.locked && in.latch.src != peerRTP {
			t.Fatalf("locked on %v, not the signalled address", in.latch.src)
		}
		var drops uint64
		for i := range nDrops {
			drops += in.stats.drops[i].Load()
		}
		c := in.stats
		if got := drops + c.get(cPacketsIn) + c.get(cRTCPIn) + c.get(cRTCPMalformed); got != 4 {
			t.Fatalf("4 datagrams counted %d times", got)
		}
	})
}

// FuzzRTCP feeds arbitrary compound RTCP from the signalled address: it
// never panics and the figures stay in range.
func FuzzRTCP(f *testing.F) {
	f.Add([]byte{0x81, 0xc9, 0x00, 0x07, 0, 0, 0, 7, 0, 0, 0x12, 0x34, 0x40, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 80, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x81, 0xcb, 0x00, 0x01, 0, 0, 0, 7})
	f.Add([]byte{0x80, 0xc8, 0x00, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0x81, 0xca, 0x00, 0x02, 0, 0, 0, 7, 1, 2, 'a', 'b'})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInbound(t, false)
		now := time.Unix(1700000000, 0)
		in.receive(data, peerRTCP, now, true)
		in.receive(data, peerRTP, now, false) // muxed? not negotiated: RTP
		if v := in.remote; v.fractionLost < 0 || v.fractionLost >= 1 || v.rtt < 0 {
			t.Fatalf("remote view %+v", v)
		}
		if _, ok := in.rx.report(now); ok && in.rx.received == 0 {
			t.Fatal("a report without a packet")
		}
	})
}
