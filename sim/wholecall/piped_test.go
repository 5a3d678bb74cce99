package wholecall_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/brisvox/brisvox/providers"
)

// dialFunc is an adapter Config's DialContext.
type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// mockServer is what piped uses of a vendor's mock server.
type mockServer interface {
	URL() string
	Requests() []map[string]any
	Close()
}

// adapter is an LLM adapter under test: a provider that must be closed.
type adapter interface {
	providers.LLM
	io.Closer
}

// piped is a sim.ScriptedLLM over a real adapter: it starts a mock with
// start (the vendor mock's NewWithListener) on an in-memory pipe
// listener, answering script, and an adapter made by open from the mock's
// URL and the pipe's dialer. requests counts the streaming requests the
// mock has received; stop closes the adapter, then the mock. When open
// fails, the mock is closed and its error returned. No real socket is
// used, so it works in a testing/synctest bubble.
func piped[R any, S mockServer, A adapter](start func(net.Listener, ...R) S, open func(url string, dial dialFunc) (A, error), script ...R) (p providers.LLM, requests func() int, stop func(), err error) {
	l := pipetest.New()
	srv := start(l, script...)
	a, err := open(srv.URL(), l.DialContext)
	if err != nil {
		srv.Close()
		return nil, nil, nil, err
	}
	stop = func() {
		_ = a.Close()
		srv.Close()
	}
	return a, func() int { return len(srv.Requests()) }, stop, nil
}

// fakeServer is a mockServer that counts its closes.
type fakeServer struct {
	reqs    int
	closes  int
	closeFn func()
}

func (s *fakeServer) URL() string { return "http://mock" }
func (s *fakeServer) Requests() []map[string]any {
	return make([]map[string]any, s.reqs)
}
func (s *fakeServer) Close() {
	s.closes++
	if s.closeFn != nil {
		s.closeFn()
	}
}

// fakeAdapter is an adapter that records its close.
type fakeAdapter struct {
	providers.LLM
	closed bool
}

func (a *fakeAdapter) Close() error {
	a.closed = true
	return nil
}

var (
	_ mockServer = (*fakeServer)(nil)
	_ adapter    = (*fakeAdapter)(nil)
)

// TestPiped: stop closes the adapter, then the mock; requests counts
// the mock's; a refused adapter closes the mock and returns the error.
// Mutations caught: the mock left open when open fails; stop closing the
// mock before the adapter.
func TestPiped(t *testing.T) {
	a := &fakeAdapter{}
	adapterFirst := false
	srv := &fakeServer{reqs: 3, closeFn: func() { adapterFirst = a.closed }}
	start := func(_ net.Listener, _ ...string) *fakeServer { return srv }
	p, requests, stop, err := piped(start, func(url string, dial dialFunc) (*fakeAdapter, error) {
		if url != srv.URL() || dial == nil {
			t.Errorf("open(%q, %v)", url, dial)
		}
		return a, nil
	})
	if err != nil || p != a || requests() != 3 {
		t.Fatalf("piped: %v, %d requests, error %v", p, requests(), err)
	}
	stop()
	if !a.closed || srv.closes != 1 || !adapterFirst {
		t.Fatalf("adapter closed %v, mock closed %d times, the adapter first %v", a.closed, srv.closes, adapterFirst)
	}

	srv = &fakeServer{}
	refused := errors.New("refused")
	p, _, _, err = piped(start, func(string, dialFunc) (*fakeAdapter, error) { return nil, refused })
	if p != nil || err != refused || srv.closes != 1 {
		t.Fatalf("piped: %v, error %v, mock closed %d times", p, err, srv.closes)
	}
}
