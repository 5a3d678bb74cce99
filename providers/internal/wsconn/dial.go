package wsconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/brisvox/brisvox/providers"
)

// Dialer opens sessions to one endpoint. It is safe for concurrent use.
type Dialer struct {
	cfg    Config
	addr   string // host:port of the URL
	host   string // host name, for TLS
	secure bool

	mu      sync.Mutex
	spare   net.Conn // a connection opened by Warm, nil when none
	spareAt time.Time
	closed  bool
}

// New checks cfg and makes a Dialer. It does no I/O.
func New(cfg Config) (*Dialer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	u, _ := url.Parse(cfg.URL) // Validate parsed it
	d := &Dialer{cfg: cfg, host: u.Hostname(), secure: u.Scheme == "wss"}
	port := u.Port()
	if port == "" {
		port = "80"
		if d.secure {
			port = "443"
		}
	}
	d.addr = net.JoinHostPort(d.host, port)
	return d, nil
}

// Warm opens a connection (TCP, and TLS for wss) ahead of the next Dial,
// which takes it if it is younger than SpareTTL. A connection already kept
// and still young is kept. Calling it more than once is fine.
func (d *Dialer) Warm(ctx context.Context) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return providers.ErrClosed
	}
	if d.spare != nil && time.Since(d.spareAt) < d.cfg.SpareTTL {
		d.mu.Unlock()
		return nil
	}
	d.mu.Unlock()
	cctx, cancel := context.WithTimeoutCause(ctx, d.cfg.ConnectTimeout, &providers.Timeout{Op: "warm"})
	defer cancel()
	c, err := d.open(cctx)
	if err != nil {
		return dialErr(ctx, cctx, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		_ = c.Close()
		return providers.ErrClosed
	}
	if d.spare != nil {
		_ = d.spare.Close()
	}
	d.spare, d.spareAt = c, time.Now()
	return nil
}

// Close closes the kept connection; later Warm calls fail. Sessions
// already open are not affected.
func (d *Dialer) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.spare != nil {
		_ = d.spare.Close()
		d.spare = nil
	}
	return nil
}

// takeSpare hands out the connection of Warm, if it is young enough.
func (d *Dialer) takeSpare() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.spare
	d.spare = nil
	if c != nil && time.Since(d.spareAt) >= d.cfg.SpareTTL {
		_ = c.Close()
		return nil
	}
	return c
}

// open dials the endpoint: TCP, then TLS for wss (HTTP/1.1 only: the
// websocket handshake is an HTTP/1.1 upgrade).
func (d *Dialer) open(ctx context.Context) (net.Conn, error) {
	dial := d.cfg.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	c, err := dial(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	if !d.secure {
		return c, nil
	}
	tc := &tls.Config{}
	if d.cfg.TLSConfig != nil {
		tc = d.cfg.TLSConfig.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = d.host
	}
	tc.NextProtos = []string{"http/1.1"}
	t := tls.Client(c, tc)
	if err := t.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return t, nil
}

// Dial opens a session: the handshake within ConnectTimeout, then the
// reader and writer goroutines. ctx bounds the connect and the session;
// when it is done the session closes as by Close. The handler's
// OnMessage runs on the reader goroutine, OnEnd once on the writer's
// after both stopped.
func (d *Dialer) Dial(ctx context.Context, h Handler) (*Session, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, d.cfg.ConnectTimeout, &providers.Timeout{Op: "connect"})
	defer cancel()
	for attempt := 0; ; attempt++ {
		spare := d.takeSpare()
		if attempt > 0 {
			spare = nil
		}
		c, raw, err := d.handshake(cctx, spare)
		if err == nil {
			return newSession(ctx, &d.cfg, c, raw, h), nil
		}
		// A kept connection the server has since dropped fails the
		// handshake before any answer: try once more on a new one.
		var rej *providers.Rejected
		if spare != nil && attempt == 0 && cctx.Err() == nil && !errors.As(err, &rej) {
			continue
		}
		return nil, dialErr(ctx, cctx, err)
	}
}

// handshake runs the websocket handshake over spare, or over a connection
// it dials, through an http.Transport made for this one handshake; it
// returns the connection so the session can put deadlines on it.
func (d *Dialer) handshake(ctx context.Context, spare net.Conn) (*websocket.Conn, net.Conn, error) {
	var raw net.Conn
	connect := func(ctx context.Context, _, _ string) (net.Conn, error) {
		c := spare
		spare = nil
		if c == nil {
			var err error
			if c, err = d.open(ctx); err != nil {
				return nil, err
			}
		}
		raw = c
		return c, nil
	}
	tr := &http.Transport{DialContext: connect, DialTLSContext: connect}
	// A refused handshake may leave its connection idle in the pool:
	// nothing pools across handshakes, so close it.
	defer tr.CloseIdleConnections()
	c, resp, err := websocket.Dial(ctx, d.cfg.URL, &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: tr},
		HTTPHeader: d.cfg.Header,
	})
	if spare != nil {
		_ = spare.Close()
	}
	if err != nil {
		if raw != nil {
			_ = raw.Close()
		}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, nil, d.rejected(resp)
		}
		if resp != nil {
			return nil, nil, &providers.Protocol{Detail: "websocket handshake answer is invalid"}
		}
		return nil, nil, err
	}
	if raw == nil {
		_ = c.CloseNow()
		return nil, nil, &providers.Protocol{Detail: "websocket handshake used no connection of the dialer"}
	}
	c.SetReadLimit(d.cfg.ReadLimit)
	return c, raw, nil
}

// rejected is the error of a handshake the server answered with a status
// other than 101.
func (d *Dialer) rejected(resp *http.Response) error {
	detail := http.StatusText(resp.StatusCode)
	if d.cfg.RejectDetail != nil {
		var body []byte
		if resp.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
		}
		detail = d.cfg.RejectDetail(resp, body)
	}
	return &providers.Rejected{Status: resp.StatusCode, Detail: detail}
}

// dialErr maps a failed connect: a typed provider error as it is, the
// caller's cancellation as it is, the connect deadline as its Timeout,
// anything else as a connection that could not be made (Disconnected).
func dialErr(parent, ctx context.Context, err error) error {
	var rej *providers.Rejected
	var prot *providers.Protocol
	switch {
	case errors.As(err, &rej), errors.As(err, &prot):
		return err
	case parent.Err() != nil:
		return parent.Err()
	case ctx.Err() != nil:
		var t *providers.Timeout
		if cause := context.Cause(ctx); errors.As(cause, &t) {
			return t
		}
		return &providers.Timeout{Op: "connect"}
	}
	return &providers.Disconnected{Cause: fmt.Errorf("connect: %w", err)}
}
