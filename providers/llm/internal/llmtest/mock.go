package llmtest

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmmock"
)

// Mock is what this package uses of a vendor's mock server: the servers
// of anthropicmock, geminimock and openaimock all have it, from
// llmmock.Server.
type Mock interface {
	URL() string
	SetSource(f func() llmmock.Response)
	Events() int
	Conns() int
	WarmHits() int
	Requests() []map[string]any
	Close()
}

// Adapter is an LLM adapter under test: a provider that must be closed.
type Adapter interface {
	providers.LLM
	io.Closer
}

// DialFunc is an adapter Config's DialContext.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Piped starts a mock with start (the vendor mock's NewWithListener) on an
// in-memory pipe listener, answering script, and returns it with the
// dialer that reaches it, for the adapter's Config.DialContext. The mock is
// closed at the end of the test. No real socket is used, so it works in a
// testing/synctest bubble (call it inside the bubble).
func Piped[S Mock](t testing.TB, start func(net.Listener, ...llmmock.Response) S, script ...llmmock.Response) (S, DialFunc) {
	t.Helper()
	l := pipetest.New()
	srv := start(l, script...)
	t.Cleanup(srv.Close)
	return srv, l.DialContext
}

// Open makes an adapter with newAdapter (the adapter's New) from cfg,
// edited first by mutate when it is not nil, and fails the test if it is
// refused. The adapter is closed at the end of the test.
func Open[C any, A io.Closer](t testing.TB, newAdapter func(C) (A, error), cfg C, mutate func(*C)) A {
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
