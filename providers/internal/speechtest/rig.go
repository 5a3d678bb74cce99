package speechtest

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/brisvox/brisvox/providers/internal/wsmock"
)

// DialFunc is the type of an adapter's Config.DialContext.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Pipe starts the mock that newMock makes (a vendor mock's New) on a fresh
// in-memory listener and closes it at the end of the test; dial is the
// listener's DialContext, for the adapter's Config. It must run inside the
// testing/synctest bubble the adapter runs in.
func Pipe[M interface{ Close() }](t testing.TB, newMock func(...wsmock.Option) M) (srv M, dial DialFunc) {
	t.Helper()
	l := wsmock.NewPipeListener()
	srv = newMock(wsmock.WithListener(l))
	t.Cleanup(srv.Close)
	return srv, l.DialContext
}

// NewAdapter builds an adapter with newAdapter (its package's New) from
// cfg, changed first by mutate when it is not nil; an error fails the
// test. The adapter is closed at the end of the test.
func NewAdapter[C any, A interface{ Close() error }](t testing.TB, newAdapter func(C) (A, error), cfg C, mutate func(*C)) A {
	t.Helper()
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := newAdapter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// Connect opens a session with connect (an adapter's Connect) on a
// background context; an error fails the test. The session is closed at
// the end of the test.
func Connect[S interface{ Close() error }](t testing.TB, connect func(context.Context) (S, error)) S {
	t.Helper()
	s, err := connect(context.Background())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Dials counts the connections an adapter dials: Wrap its
// Config.DialContext (in the mutate of a rig).
type Dials struct{ n atomic.Int64 }

// Wrap returns dial counting each call.
func (d *Dials) Wrap(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		d.n.Add(1)
		return dial(ctx, network, addr)
	}
}

// Count is the number of dials so far.
func (d *Dials) Count() int { return int(d.n.Load()) }
