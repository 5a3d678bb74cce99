package pipetest

import (
	"context"
	"net"
	"sync"
)

// Addr is the address of every Listener; the host of its URL.
const Addr = "pipe.invalid:80"

// Listener is an in-memory net.Listener: DialContext makes a net.Pipe
// pair, hands the server end to Accept and returns the client end. It
// blocks only on channels, so it works inside a testing/synctest bubble
// (where real sockets do not), as long as it is made inside the bubble.
// Give its DialContext to the client and the listener to the mock server.
type Listener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

var _ net.Listener = (*Listener)(nil)

// New makes an open listener.
func New() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a DialContext and returns the server end of its pipe.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrListenerClosed
	}
}

// Close makes Accept and DialContext fail; connections already made stay
// open. Safe to call more than once.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the package's Addr.
func (l *Listener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener, whatever network and addr say: it
// waits for Accept (or ctx, or Close) and returns the client end of a
// net.Pipe. Its signature is that of net.Dialer.DialContext.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-ctx.Done():
		_ = client.Close()
		_ = server.Close()
		return nil, ctx.Err()
	case <-l.done:
		_ = client.Close()
		_ = server.Close()
		return nil, ErrListenerClosed
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return Addr }
