package rtp

import (
	"net/netip"
	"testing"
)

// pkt is one packet a latch test feeds.
type pkt struct {
	src  netip.AddrPort
	ssrc uint32
	seq  uint16
}

func TestLatch(t *testing.T) {
	const ssrc, other = 0x1234, 0x9999
	run := func(src netip.AddrPort, ssrc uint32, seq0 uint16, n int) []pkt {
		var out []pkt
		for i := range n {
			out = append(out, pkt{src, ssrc, seq0 + uint16(i)})
		}
		return out
	}
	cat := func(ps ...[]pkt) []pkt {
		var out []pkt
		for _, p := range ps {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name      string
		symmetric bool
		pkts      []pkt
		// want is the verdict of the last packet.
		wantOK    bool
		wantCause dropCause
		wantLock  bool
		wantSrc   netip.AddrPort
	}{
		{name: "signalled run latches on the 4th", pkts: run(peerRTP, ssrc, 10, 4), wantOK: true, wantLock: true, wantSrc: peerRTP},
		{name: "three are still learning", pkts: run(peerRTP, ssrc, 10, 3), wantCause: dropLearning},
		{name: "sequence wrap continues the run", pkts: run(peerRTP, ssrc, 65534, 4), wantOK: true, wantLock: true, wantSrc: peerRTP},
		// Mutation caught: a run counted without checking consecutive
		// sequence numbers (a spoofer's random sequence numbers latch).
		{name: "a gap restarts the run", pkts: []pkt{{peerRTP, ssrc, 1}, {peerRTP, ssrc, 2}, {peerRTP, ssrc, 4}, {peerRTP, ssrc, 5}}, wantCause: dropLearning},
		{name: "another port of the signalled host is not signalled", pkts: run(peerOther, ssrc, 1, 10), wantCause: dropUnsignalled},
		{name: "another host is not signalled", pkts: run(attacker, ssrc, 1, 10), wantCause: dropUnsignalled},
		{name: "symmetric lets another source latch", symmetric: true, pkts: run(attacker, ssrc, 1, 4), wantOK: true, wantLock: true, wantSrc: attacker},
		// Mutation caught: the lock not checking the port.
		{name: "after lock another port is dropped", pkts: cat(run(peerRTP, ssrc, 1, 4), run(peerOther, ssrc, 5, 1)), wantCause: dropForeignAddr, wantLock: true, wantSrc: peerRTP},
		// Mutation caught: the lock not checking the SSRC (RTPBleed from
		// the peer's own address with a guessed port is the same check).
		{name: "after lock another SSRC is dropped", pkts: cat(run(peerRTP, ssrc, 1, 4), run(peerRTP, other, 5, 1)), wantCause: dropForeignSSRC, wantLock: true, wantSrc: peerRTP},
		{name: "after lock another host is dropped, even symmetric", symmetric: true, pkts: cat(run(peerRTP, ssrc, 1, 4), run(attacker, ssrc, 5, 6)), wantCause: dropForeignAddr, wantLock: true, wantSrc: peerRTP},
		{name: "two SSRCs interleaved: the first complete run wins", pkts: cat(
			[]pkt{{peerRTP, ssrc, 1}, {peerRTP, other, 100}, {peerRTP, ssrc, 2}, {peerRTP, other, 101}, {peerRTP, ssrc, 3}, {peerRTP, other, 102}, {peerRTP, ssrc, 4}}),
			wantOK: true, wantLock: true, wantSrc: peerRTP},
		{name: "after lock the stream passes", pkts: run(peerRTP, ssrc, 1, 20), wantOK: true, wantLock: true, wantSrc: peerRTP},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLatch(4, 8, tc.symmetric)
			l.reset(peerRTP)
			var ok bool
			var cause dropCause
			for _, p := range tc.pkts {
				ok, _, cause = l.checkRTP(p.src, p.ssrc, p.seq)
			}
			if ok != tc.wantOK || (!ok && cause != tc.wantCause) {
				t.Fatalf("last packet: ok %v cause %s, want ok %v cause %s", ok, dropNames[cause], tc.wantOK, dropNames[tc.wantCause])
			}
			if l.locked != tc.wantLock || (tc.wantLock && l.src != tc.wantSrc) {
				t.Fatalf("locked %v on %v, want %v on %v", l.locked, l.src, tc.wantLock, tc.wantSrc)
			}
		})
	}
}

// TestLatchCandidateFlood: a flood of other sources (symmetric RTP on)
// cannot keep the signalled source from latching: it is never evicted.
// Mutation caught: eviction by age alone (the flood evicts the signalled
// candidate between its packets and it never completes its run).
func TestLatchCandidateFlood(t *testing.T) {
	l := newLatch(4, 4, true)
	l.reset(peerRTP)
	for seq := range uint16(4) {
		for i := range 50 {
			src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(i), 1}), 4000)
			if ok, _, _ := l.checkRTP(src, uint32(i), uint16(1000*i)); ok {
				t.Fatalf("a flood source latched")
			}
		}
		ok, latched, cause := l.checkRTP(peerRTP, 7, 100+seq)
		if seq < 3 && (ok || cause != dropLearning) {
			t.Fatalf("packet %d: ok %v cause %s", seq, ok, dropNames[cause])
		}
		if seq == 3 && !(ok && latched) {
			t.Fatalf("the signalled source did not latch through the flood: cause %s", dropNames[cause])
		}
	}
}

// TestLatchReset: only reset learns again, and it forgets the old lock.
func TestLatchReset(t *testing.T) {
	l := newLatch(2, 8, false)
	l.reset(peerRTP)
	l.checkRTP(peerRTP, 1, 1)
	if ok, _, _ := l.checkRTP(peerRTP, 1, 2); !ok {
		t.Fatal("no latch")
	}
	// The peer moves without a new offer/answer: dropped, however long.
	for i := range uint16(100) {
		if ok, _, c := l.checkRTP(peerOther, 1, 3+i); ok || c != dropForeignAddr {
			t.Fatalf("a moved source passed without Update (cause %s)", dropNames[c])
		}
	}
	l.reset(peerOther)
	if ok, _, _ := l.checkRTP(peerRTP, 1, 200); ok {
		t.Fatal("the old source still passes after the new offer/answer")
	}
	l.checkRTP(peerOther, 1, 200)
	if ok, _, _ := l.checkRTP(peerOther, 1, 201); !ok {
		t.Fatal("the new source did not latch")
	}
}

func TestLatchRTCP(t *testing.T) {
	tests := []struct {
		name      string
		lockOn    netip.AddrPort
		symmetric bool
		src       netip.AddrPort
		muxed     bool
		want      bool
	}{
		{name: "before lock from the signalled host", src: peerRTCP, want: true},
		{name: "before lock from another host", src: attacker, want: false},
		{name: "before lock symmetric any", symmetric: true, src: attacker, want: true},
		{name: "locked, own port from the same host", lockOn: peerRTP, src: peerRTCP, want: true},
		{name: "locked, muxed from the rtp source", lockOn: peerRTP, src: peerRTP, muxed: true, want: true},
		{name: "locked, muxed from another port", lockOn: peerRTP, src: peerRTCP, muxed: true, want: false},
		{name: "locked, another host", lockOn: peerRTP, symmetric: true, src: attacker, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newLatch(1, 8, tc.symmetric)
			l.reset(peerRTP)
			if tc.lockOn.IsValid() {
				l.checkRTP(tc.lockOn, 1, 1)
			}
			if got := l.checkRTCP(tc.src, tc.muxed); got != tc.want {
				t.Fatalf("checkRTCP = %v, want %v", got, tc.want)
			}
		})
	}
}
