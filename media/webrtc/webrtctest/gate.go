package webrtctest

import (
	"net"
	"sync/atomic"
)

// gateConn is a UDP socket that can be made to drop every datagram both
// ways, as a client whose network vanished.
type gateConn struct {
	net.PacketConn
	shut atomic.Bool
}

// ReadFrom returns the next datagram that is let through.
func (g *gateConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := g.PacketConn.ReadFrom(b)
		if err != nil || !g.shut.Load() {
			return n, addr, err
		}
	}
}

// WriteTo sends b unless the gate is shut (then it pretends it did).
func (g *gateConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	if g.shut.Load() {
		return len(b), nil
	}
	return g.PacketConn.WriteTo(b, addr)
}
