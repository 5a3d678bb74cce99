package rtp

import (
	"encoding/binary"
	"testing"
	"time"
)

// relayPair is session a's input relayed to session b's output, both
// driven by hand on null sockets; step receives one packet at a and
// returns after b sent it.
func relayPair(tb testing.TB) (a, b *Session, step func()) {
	tb.Helper()
	p := Params{Codec: CodecPCMU, Events: true, EventPayloadType: 101, RemoteRTP: peerRTP}
	a, b = benchSession(tb, p, 8000, 8000), benchSession(tb, p, 8000, 8000)
	b.SetRelayOutput(true)
	a.SetRelay(func(rp RelayedPacket) { b.Relay(rp) })
	pkt := rtpPacket(0, 0, 0, 0x55, false, tonePCMU(1000, 0, 160))
	t0 := time.Unix(1000, 0)
	i := 0
	step = func() {
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		binary.BigEndian.PutUint32(pkt[4:], uint32(i)*160)
		a.in.receive(pkt, peerRTP, t0.Add(time.Duration(i)*20*time.Millisecond), false)
		i++
	}
	for range DefaultLatchRun {
		step()
	}
	return a, b, step
}

// TestRelayAllocates: a relayed packet, receive to send, allocates
// nothing. Mutation caught: copying the payload to a fresh slice in the
// seam (append([]byte(nil), ...)) makes it 1.
func TestRelayAllocates(t *testing.T) {
	_, b, step := relayPair(t)
	before := b.Stats().Relayed
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("%v allocations per relayed packet, want 0", n)
	}
	if got := b.Stats().Relayed - before; got < 200 {
		t.Fatalf("%d packets relayed, want every one", got)
	}
}

// BenchmarkRelay is the bridge's added latency per packet: from the
// datagram read at one session to the send call at the other (parse,
// latch, receive statistics, rewrite onto the other stream, send on a
// null socket).
func BenchmarkRelay(b *testing.B) {
	_, _, step := relayPair(b)
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
}
