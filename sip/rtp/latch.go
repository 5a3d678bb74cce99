package rtp

import "net/netip"

// dropCause is why an inbound datagram was dropped.
type dropCause uint8

// The drop causes, as Stats.Drops names them.
const (
	// dropMalformed: neither RTP nor RTCP, or a broken header.
	dropMalformed dropCause = iota
	// dropUnsignalled: before the lock, from a source other than the
	// signalled address (without SymmetricRTP).
	dropUnsignalled
	// dropLearning: a packet of a source's learning run.
	dropLearning
	// dropCandidates: the candidate table was full of sources from the
	// signalled address.
	dropCandidates
	// dropForeignAddr: after the lock, from another address or port.
	dropForeignAddr
	// dropForeignSSRC: after the lock, from the latched address with
	// another SSRC.
	dropForeignSSRC
	// dropPayloadType: a payload type the offer/answer did not agree.
	dropPayloadType
	// dropRTCPForeign: RTCP from an address that is not the peer's.
	dropRTCPForeign
	// dropNoRemote: before Start, or with no address to learn from.
	dropNoRemote
	// dropBuffer: the jitter buffer refused the packet (too large).
	dropBuffer
	// dropLoop: our own SSRC came back (a peer or a box that echoes what
	// we send, RFC 3550 8.2): never the caller's audio, never latched.
	dropLoop
	nDrops
)

var dropNames = [nDrops]string{
	dropMalformed:   "malformed",
	dropUnsignalled: "unsignalled_source",
	dropLearning:    "learning",
	dropCandidates:  "candidates_full",
	dropForeignAddr: "foreign_address",
	dropLoop:        "loop",
	dropForeignSSRC: "foreign_ssrc",
	dropPayloadType: "payload_type",
	dropRTCPForeign: "rtcp_foreign",
	dropNoRemote:    "no_remote",
	dropBuffer:      "jitter_refused",
}

// candidate is a source being learned: its last sequence number and how
// many consecutive ones it sent.
type candidate struct {
	src  netip.AddrPort
	ssrc uint32
	seq  uint16
	run  int
	seen uint64 // when it last sent, in packets checked: the eviction order
}

// latch is the strict-source state (the RTPBleed defence): it learns the
// peer from a run of packets with consecutive sequence numbers and one
// SSRC, from the signalled address (or, with symmetric RTP, any address),
// then locks address, port and SSRC. Only reset, on a new offer/answer,
// learns again. Plain state: the reader goroutine owns it.
type latch struct {
	run       int
	symmetric bool
	signalled netip.AddrPort

	locked bool
	src    netip.AddrPort
	ssrc   uint32

	cands []candidate // len = the bound; run 0 marks a free slot
	clock uint64
}

func newLatch(run, candidates int, symmetric bool) latch {
	return latch{run: run, symmetric: symmetric, cands: make([]candidate, candidates)}
}

// reset forgets the lock and the candidates and learns from signalled.
func (l *latch) reset(signalled netip.AddrPort) {
	l.signalled = signalled
	l.locked = false
	l.src, l.ssrc = netip.AddrPort{}, 0
	clear(l.cands)
}

// checkRTP decides on one RTP packet from src: pass it (ok), or drop it
// with a cause. latched tells that this packet completed the run (it
// passes: the run's earlier packets were dropped).
func (l *latch) checkRTP(src netip.AddrPort, ssrc uint32, seq uint16) (ok, latched bool, cause dropCause) {
	if l.locked {
		switch {
		case src != l.src:
			return false, false, dropForeignAddr
		case ssrc != l.ssrc:
			return false, false, dropForeignSSRC
		}
		return true, false, 0
	}
	if !l.signalled.IsValid() || l.signalled.Addr().IsUnspecified() {
		return false, false, dropNoRemote
	}
	fromSignalled := src == l.signalled
	if !fromSignalled && !l.symmetric {
		return false, false, dropUnsignalled
	}
	l.clock++
	c := l.find(src, ssrc)
	if c == nil {
		if c = l.slot(fromSignalled); c == nil {
			return false, false, dropCandidates
		}
		*c = candidate{src: src, ssrc: ssrc, seq: seq, run: 1, seen: l.clock}
	} else {
		if seq == c.seq+1 {
			c.run++
		} else {
			c.run = 1
		}
		c.seq, c.seen = seq, l.clock
	}
	if c.run < l.run {
		return false, false, dropLearning
	}
	l.locked, l.src, l.ssrc = true, src, ssrc
	clear(l.cands)
	return true, true, 0
}

func (l *latch) find(src netip.AddrPort, ssrc uint32) *candidate {
	for i := range l.cands {
		if c := &l.cands[i]; c.run > 0 && c.src == src && c.ssrc == ssrc {
			return c
		}
	}
	return nil
}

// slot is a free candidate slot, else the least recently seen candidate
// that is not from the signalled address (a flood of other sources never
// evicts the signalled one); a source from the signalled address may evict
// any. nil: none may be evicted.
func (l *latch) slot(fromSignalled bool) *candidate {
	var victim *candidate
	for i := range l.cands {
		c := &l.cands[i]
		if c.run == 0 {
			return c
		}
		if !fromSignalled && c.src == l.signalled {
			continue
		}
		if victim == nil || c.seen < victim.seen {
			victim = c
		}
	}
	return victim
}

// checkRTCP decides on one RTCP packet from src: from the latched address
// (any port: RTCP has its own unless muxed; the very source when muxed),
// or before the lock from the signalled address, or any with symmetric
// RTP.
func (l *latch) checkRTCP(src netip.AddrPort, muxed bool) bool {
	switch {
	case l.locked && muxed:
		return src == l.src
	case l.locked:
		return src.Addr() == l.src.Addr()
	case l.symmetric:
		return true
	}
	return l.signalled.IsValid() && src.Addr() == l.signalled.Addr()
}
