package httpllm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// maxWarmBody bounds what Warm reads of the model list.
const maxWarmBody = 1 << 20

// StreamConfig bounds a streamed response. The adapter fills it from its
// Config after the defaults; every field is set.
type StreamConfig struct {
	// ConnectTimeout bounds the wait for the response headers (dial, TLS,
	// request and the server's first byte of headers), and Warm.
	ConnectTimeout time.Duration
	// FirstEventTimeout bounds the wait from the headers to the first
	// event.
	FirstEventTimeout time.Duration
	// IdleTimeout bounds the gap between two events.
	IdleTimeout time.Duration
	// MaxLineBytes bounds a line, and an event's data, of the stream.
	MaxLineBytes int
	// CutDetail begins the Disconnected detail of a body that fails before
	// the vendor's end of response ("stream ended before [DONE]").
	CutDetail string
}

// ClientConfig sets up a Client.
type ClientConfig struct {
	StreamConfig
	// DialContext opens the connections; nil: a net.Dialer bounded by
	// ConnectTimeout.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Key is the API key, redacted from the excerpts of error bodies.
	Key string
	// Header is set on every request: the vendor's auth (with the key)
	// and version headers. The Client keeps it; nobody changes it after.
	Header http.Header
	// InvalidConfig is the adapter's sentinel, wrapped around the error
	// of a request that cannot be built (a URL that does not parse).
	InvalidConfig error
}

// Client is the HTTP side of an adapter. It is safe for concurrent use:
// each Stream is independent; they share the connection pool.
type Client struct {
	cfg       ClientConfig // holds the key: never printed (see String)
	transport *http.Transport
	http      *http.Client
}

// NewClient builds the transport and the client. It does no I/O.
func NewClient(cfg ClientConfig) *Client {
	hc, tr := httpx.NewClient(httpx.ClientConfig{ConnectTimeout: cfg.ConnectTimeout, DialContext: cfg.DialContext})
	return &Client{cfg: cfg, transport: tr, http: hc}
}

// String names the client without its key.
func (c *Client) String() string { return "httpllm.Client" }

// GoString is String: %#v must not print the key either.
func (c *Client) GoString() string { return c.String() }

// CloseIdle drops the pooled connections. Streams still open keep theirs.
func (c *Client) CloseIdle() { c.transport.CloseIdleConnections() }

// newRequest builds a request with the vendor's headers.
func (c *Client) newRequest(ctx context.Context, method, url string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", c.cfg.InvalidConfig, err)
	}
	for k, v := range c.cfg.Header {
		req.Header[k] = v[:len(v):len(v)] // an Add copies, never writes into the shared array
	}
	return req, nil
}

// Warm opens a connection ahead of the first request: a GET of url (the
// model list), read to its end (bounded) so the keep-alive connection (TCP
// and TLS) stays in the pool for the next Stream. A refusal (a bad key,
// say) is a Rejected; the wait is bounded by ConnectTimeout.
func (c *Client) Warm(ctx context.Context, url string) error {
	wctx, cancel := context.WithTimeoutCause(ctx, c.cfg.ConnectTimeout, &providers.Timeout{Op: "warm"})
	defer cancel()
	req, err := c.newRequest(wctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return requestErr(ctx, wctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return c.rejected(resp)
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxWarmBody)); err != nil {
		return requestErr(ctx, wctx, err)
	}
	return nil
}

// rejected reads a short, key-free excerpt of an error response.
func (c *Client) rejected(resp *http.Response) error { return httpx.Rejected(resp, c.cfg.Key) }

// Open posts the JSON body to url and readies s (the zero Stream, which
// the caller allocates, often inside its own stream type) to read the
// response with dec. The deadlines run from here: ConnectTimeout to the
// response headers, FirstEventTimeout to the first event, IdleTimeout
// between events; each is a Timeout. A non-2xx status is a Rejected with a
// short excerpt of the body; a JSON answer instead of an event stream is a
// Protocol. On error s holds nothing to release.
func (c *Client) Open(ctx context.Context, s *Stream, url string, body []byte, dec Decoder) error {
	s.begin(ctx, dec, &c.cfg.StreamConfig)
	stop := func() {
		s.timer.Stop()
		s.cancel(nil)
	}
	req, err := c.newRequest(s.ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		stop()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	if err != nil {
		err = requestErr(ctx, s.ctx, err)
		stop()
		return err
	}
	if resp.StatusCode/100 != 2 {
		err := c.rejected(resp)
		resp.Body.Close()
		stop()
		return err
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		resp.Body.Close()
		stop()
		return &providers.Protocol{Detail: "the response is " + ct + ", not an event stream"}
	}
	s.attach(resp.Body, &c.cfg.StreamConfig)
	return nil
}
