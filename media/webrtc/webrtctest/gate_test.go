package webrtctest

import (
	"net"
	"testing"
	"time"
)

func TestIsRTP(t *testing.T) {
	rtp := make([]byte, 12)
	rtp[0], rtp[1] = 0x80, 111
	marker := append([]byte(nil), rtp...)
	marker[1] = 0x80 | 111
	rtcp := append([]byte(nil), rtp...)
	rtcp[1] = 200
	stun := make([]byte, 20)
	dtls := append([]byte{22}, make([]byte, 12)...)
	for name, c := range map[string]struct {
		b    []byte
		want bool
	}{
		"rtp": {rtp, true}, "rtp with marker": {marker, true}, "rtcp sender report": {rtcp, false},
		"stun": {stun, false}, "dtls": {dtls, false}, "short": {rtp[:11], false},
	} {
		if got := isRTP(c.b); got != c.want {
			t.Errorf("%s: isRTP %v, want %v", name, got, c.want)
		}
	}
}

// TestKernelStamps: with kernel timestamps on, every RTP datagram's
// receive time is recorded (from the kernel, close to when it was sent),
// other datagrams are not. Real loopback sockets. Mutation: recording
// every datagram -> 3 stamps, not 2.
func TestKernelStamps(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback sockets")
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gateConn{PacketConn: pc}
	if !g.stampKernel() {
		t.Fatal("no kernel timestamps on a UDP socket")
	}
	defer g.Close()
	out, err := net.Dial("udp4", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	rtp := make([]byte, 40)
	rtp[0], rtp[1] = 0x80, 111
	rtcp := append([]byte(nil), rtp...)
	rtcp[1] = 201
	sent := time.Now()
	for _, b := range [][]byte{rtp, rtcp, rtp} {
		if _, err := out.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 1500)
	for range 3 {
		if err := g.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := g.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
	}
	stamps := g.kernelStamps()
	if len(stamps) != 2 {
		t.Fatalf("%d stamps, want 2 (the RTP datagrams)", len(stamps))
	}
	for _, s := range stamps {
		if d := s.Sub(sent); d < -time.Second || d > 5*time.Second {
			t.Errorf("stamp %v is %v from the send", s, d)
		}
	}
}
