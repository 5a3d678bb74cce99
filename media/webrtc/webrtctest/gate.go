package webrtctest

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// gateConn is a UDP socket that can be made to drop every datagram both
// ways, as a client whose network vanished. With stamps on it records the
// kernel's receive time of every RTP packet (SO_TIMESTAMPNS): when the
// datagram reached the socket, whatever the reading goroutine's own
// scheduling delay, which is what a load test must not measure.
type gateConn struct {
	net.PacketConn
	shut atomic.Bool

	udp    *net.UDPConn // set when kernel stamps are on
	oob    []byte
	mu     sync.Mutex
	stamps []time.Time
}

// stampKernel turns on kernel receive timestamps; false when the socket
// or the system cannot.
func (g *gateConn) stampKernel() bool {
	u, ok := g.PacketConn.(*net.UDPConn)
	if !ok {
		return false
	}
	raw, err := u.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return false
	}
	g.udp, g.oob = u, make([]byte, 128)
	return true
}

// ReadFrom returns the next datagram that is let through.
func (g *gateConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := g.read(b)
		if err != nil || !g.shut.Load() {
			return n, addr, err
		}
	}
}

func (g *gateConn) read(b []byte) (int, net.Addr, error) {
	if g.udp == nil {
		return g.PacketConn.ReadFrom(b)
	}
	n, oobn, _, addr, err := g.udp.ReadMsgUDP(b, g.oob)
	if err != nil {
		return n, addr, err
	}
	if isRTP(b[:n]) {
		if at, ok := kernelStamp(g.oob[:oobn]); ok {
			g.mu.Lock()
			g.stamps = append(g.stamps, at)
			g.mu.Unlock()
		}
	}
	return n, addr, nil
}

// isRTP tells RTP from RTCP, STUN and DTLS on a muxed socket (RFC 7983,
// RFC 5761: RTCP packet types 192-223 in the second byte).
func isRTP(b []byte) bool {
	return len(b) >= 12 && b[0]&0xC0 == 0x80 && (b[1] < 192 || b[1] > 223)
}

// kernelStamp reads SCM_TIMESTAMPNS from a datagram's control messages.
func kernelStamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			// struct timespec: two native-endian 64-bit words on the
			// 64-bit Linux this runs on.
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}

// kernelStamps returns the receive times recorded so far.
func (g *gateConn) kernelStamps() []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Time(nil), g.stamps...)
}

// WriteTo sends b unless the gate is shut (then it pretends it did).
func (g *gateConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if g.shut.Load() {
		return len(b), nil
	}
	return g.PacketConn.WriteTo(b, addr)
}
