package rtp

import (
	"testing"
	"time"
)

// TestOwnSSRCNeverLatches: a peer that reflects our stream (sipp
// -rtp_echo, a looping gateway) sends our own SSRC from the signalled
// address before the caller's audio starts; those packets are dropped as
// a loop and the caller's stream latches after them.
// Mutation caught (seen failing): without the own-SSRC check the echo of
// our stream completes the learning run and locks the call onto the
// bot's own voice (locked on ourSSRC, the caller's stream foreign_ssrc).
func TestOwnSSRCNeverLatches(t *testing.T) {
	in := fuzzInbound(t, false)
	now := time.Unix(0, 0)
	for i := range 10 {
		in.receive(rtpPacket(0, uint16(100+i), uint32(160*i), in.ourSSRC, false, make([]byte, 160)), peerRTP, now, false)
		now = now.Add(20 * time.Millisecond)
	}
	const caller = 0xCAFE
	for i := range 10 {
		in.receive(rtpPacket(0, uint16(7+i), uint32(160*i), caller, false, make([]byte, 160)), peerRTP, now, false)
		now = now.Add(20 * time.Millisecond)
	}
	if !in.latch.locked || in.latch.ssrc != caller {
		t.Fatalf("latched %v on SSRC %#x, want the caller's %#x", in.latch.locked, in.latch.ssrc, caller)
	}
	if got := in.stats.drops[dropLoop].Load(); got != 10 {
		t.Errorf("loop drops %d, want 10", got)
	}
}
