package carriertest

import (
	"context"
	"errors"
	"net"
	"sync"
)

// ErrListenerClosed is returned by a closed Listener.
var ErrListenerClosed = errors.New("carriertest: listener closed")

// Listener is an in-memory net.Listener: DialContext makes a net.Pipe
// pair, hands one end to Accept and returns the other. It blocks only on
// channels, so it works inside a synctest bubble when made inside it.
type Listener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

var _ net.Listener = (*Listener)(nil)

// NewListener makes an open listener.
func NewListener() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for a DialContext.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrListenerClosed
	}
}

// Close makes Accept and DialContext fail; made connections stay open.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a fixed placeholder address.
func (l *Listener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener, whatever network and addr say.
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
func (pipeAddr) String() string  { return "pipe.invalid:80" }
