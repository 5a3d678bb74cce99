package wsmock

import (
	"context"
	"net"
	"sync"
)

// PipeAddr is the address of every PipeListener; the host of its URL.
const PipeAddr = "wsmock.pipe:80"

// PipeListener is an in-memory net.Listener: DialContext makes a net.Pipe
// pair, hands the server end to Accept and returns the client end. It
// blocks only on channels, so it works inside a testing/synctest bubble
// (where real sockets do not), as long as it is made inside the bubble.
// Give its DialContext to the client and the listener to WithListener.
type PipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

var _ net.Listener = (*PipeListener)(nil)

// NewPipeListener makes an open listener.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a DialContext and returns the server end of its pipe.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrListenerClosed
	}
}

// Close makes Accept and DialContext fail; connections already made stay
// open. Safe to call more than once.
func (l *PipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is PipeAddr.
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener, whatever network and addr say.
// Its signature is that of net.Dialer.DialContext.
func (l *PipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
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
func (pipeAddr) String() string  { return PipeAddr }
