package signal

import (
	"net"
	"sync"
	"time"
)

// readyPacketConn is a UDP listener that says when sipgo first reads it:
// by then sipgo has put it in its connection pool (same goroutine, before
// the read loop), so our requests can leave from it.
type readyPacketConn struct {
	net.PacketConn
	once  sync.Once
	ready chan struct{}
}

func (c *readyPacketConn) markReady() { c.once.Do(func() { close(c.ready) }) }

// ReadFrom reads a datagram; the first call marks the listener ready.
func (c *readyPacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	c.markReady()
	return c.PacketConn.ReadFrom(b)
}

// streamListener guards a TCP listener (under TLS too, below the
// handshake): a source the accept filter refuses is closed at once, before
// sipgo spends a goroutine or a byte on it, and every connection it hands
// on ends when it brings nothing for the idle bound.
type streamListener struct {
	net.Listener
	accept  AcceptFilter
	idle    time.Duration
	refused func()
	// ready is closed at the first Accept (sipgo serves the listener).
	once  sync.Once
	ready chan struct{}
}

func (l *streamListener) markReady() {
	if l.ready != nil {
		l.once.Do(func() { close(l.ready) })
	}
}

// Accept returns the next admitted connection.
func (l *streamListener) Accept() (net.Conn, error) {
	l.markReady()
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.accept != nil && !l.accept(addrPort(c.RemoteAddr())) {
			_ = c.Close()
			l.refused()
			continue
		}
		if l.idle <= 0 {
			return c, nil
		}
		return &idleConn{Conn: c, idle: l.idle}, nil
	}
}

// idleConn moves its read deadline at each read: a read that waits longer
// than idle fails, and sipgo ends the connection.
type idleConn struct {
	net.Conn
	idle time.Duration
}

// Read reads with the idle deadline.
func (c *idleConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}
