package speechtest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers/internal/speechtest"
	"github.com/brisvox/brisvox/providers/internal/wsmock"
	"github.com/brisvox/brisvox/providers/providertest"
)

// closingMock is a bare wsmock server (its sessions end at once) that
// records its Close.
type closingMock struct {
	*wsmock.Server
	closed bool
}

func (m *closingMock) Close() { m.Server.Close(); m.closed = true }

// Mutations caught: the mock not given the listener whose DialContext
// Pipe returns (the dial reaches no server), the mock not closed at the
// end of the test, or closed before it.
func TestPipe(t *testing.T) {
	var m *closingMock
	synctest.Test(t, func(t *testing.T) {
		var dial func(ctx context.Context, network, addr string) (net.Conn, error)
		m, dial = speechtest.Pipe(t, func(opts ...wsmock.Option) *closingMock {
			return &closingMock{Server: wsmock.New(func(*wsmock.Conn) {}, opts...)}
		})
		m.Inject(wsmock.Fault{Fault: providertest.Fault{Kind: providertest.FaultReject, Status: http.StatusTeapot}})
		c, err := dial(context.Background(), "tcp", wsmock.PipeAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /x HTTP/1.1\r\nHost: "+wsmock.PipeAddr+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot || m.Handshakes() != 1 {
			t.Errorf("status %d after %d handshakes, want the mock's refusal (418) of the one", resp.StatusCode, m.Handshakes())
		}
		if m.closed {
			t.Error("the mock was closed before the end of the test")
		}
	})
	if !m.closed {
		t.Error("the mock is open after the test")
	}
}

// fakeAdapter records its config and its Close.
type fakeAdapter struct {
	cfg    fakeConfig
	closed *bool
}

type fakeConfig struct{ url, key string }

func (a *fakeAdapter) Close() error { *a.closed = true; return nil }

// Mutations caught: mutate not applied (or applied to a copy New never
// sees), an error of New let through, the adapter not closed at the end
// of the test or closed before it.
func TestNewAdapter(t *testing.T) {
	closed := false
	newAdapter := func(c fakeConfig) (*fakeAdapter, error) { return &fakeAdapter{cfg: c, closed: &closed}, nil }
	t.Run("built", func(t *testing.T) {
		a := speechtest.NewAdapter(t, newAdapter, fakeConfig{url: "ws://x"}, func(c *fakeConfig) { c.key = "K" })
		if a.cfg != (fakeConfig{url: "ws://x", key: "K"}) {
			t.Errorf("built from %+v", a.cfg)
		}
		if closed {
			t.Error("closed before the end of the test")
		}
	})
	if !closed {
		t.Error("not closed at the end of the test")
	}
	a := speechtest.NewAdapter(t, newAdapter, fakeConfig{url: "ws://y"}, nil)
	if a.cfg.url != "ws://y" {
		t.Errorf("built from %+v without mutate", a.cfg)
	}
	r := run(t, func(tb testing.TB) {
		speechtest.NewAdapter(tb, func(fakeConfig) (*fakeAdapter, error) { return nil, errBoom }, fakeConfig{}, nil)
	})
	r.want(t, "boom", true)
}

// Mutations caught: a failed connect let through, the session not closed
// at the end of the test or closed before it.
func TestConnect(t *testing.T) {
	s := &fakeSession{}
	t.Run("connected", func(t *testing.T) {
		got := speechtest.Connect(t, func(context.Context) (*fakeSession, error) { return s, nil })
		if got != s || s.closed {
			t.Errorf("got %p (closed %v), want the open session", got, s.closed)
		}
	})
	if !s.closed {
		t.Error("the session is open after the test")
	}
	r := run(t, func(tb testing.TB) {
		speechtest.Connect(tb, func(context.Context) (*fakeSession, error) { return nil, errors.New("refused") })
	})
	r.want(t, "connect: refused", true)
}

// Mutations caught: a dial not counted, or not passed on.
func TestDials(t *testing.T) {
	var d speechtest.Dials
	var calls []string
	dial := d.Wrap(func(_ context.Context, network, addr string) (net.Conn, error) {
		calls = append(calls, network+" "+addr)
		return nil, errBoom
	})
	for range 2 {
		if _, err := dial(context.Background(), "tcp", "h:80"); !errors.Is(err, errBoom) {
			t.Errorf("dial: %v, want the wrapped dial's error", err)
		}
	}
	if d.Count() != 2 || !slices.Equal(calls, []string{"tcp h:80", "tcp h:80"}) {
		t.Errorf("counted %d, passed on %q; want 2 and both", d.Count(), calls)
	}
}
