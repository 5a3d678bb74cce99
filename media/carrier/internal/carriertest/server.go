package carriertest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/coder/websocket"
)

// Server serves a handler for a test.
type Server struct {
	srv       *httptest.Server
	transport *http.Transport
	dial      func(ctx context.Context) (net.Conn, error)
}

// NewPipeServer serves h on an in-memory listener; call it inside the
// synctest bubble that uses it.
func NewPipeServer(h http.Handler) *Server {
	ln := pipetest.New()
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	return &Server{srv: srv, transport: &http.Transport{DialContext: ln.DialContext},
		dial: func(ctx context.Context) (net.Conn, error) { return ln.DialContext(ctx, "pipe", pipetest.Addr) }}
}

// NewLoopbackServer serves h on 127.0.0.1, port 0.
func NewLoopbackServer(h http.Handler) *Server {
	srv := httptest.NewServer(h)
	addr := srv.Listener.Addr().String()
	return &Server{srv: srv, transport: &http.Transport{MaxIdleConnsPerHost: -1},
		dial: func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		}}
}

// Host is the server's host:port, the Host header of its requests.
func (s *Server) Host() string { return strings.TrimPrefix(s.srv.URL, "http://") }

// DialConn opens a bare connection to the server (for RawClient).
func (s *Server) DialConn(ctx context.Context) (net.Conn, error) { return s.dial(ctx) }

// URL is the ws:// URL of path (with its query).
func (s *Server) URL(path string) string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http") + path
}

// Client is an HTTP client that reaches the server.
func (s *Server) Client() *http.Client { return &http.Client{Transport: s.transport} }

// Dial opens a websocket to path. The response is returned on a failed
// handshake too (its body is closed). hdr, if given, is sent with the
// request.
func (s *Server) Dial(ctx context.Context, path string, hdr ...http.Header) (*websocket.Conn, *http.Response, error) {
	opts := &websocket.DialOptions{HTTPClient: s.Client()}
	if len(hdr) > 0 {
		opts.HTTPHeader = hdr[0]
	}
	ws, resp, err := websocket.Dial(ctx, s.URL(path), opts)
	if resp != nil && resp.Body != nil && err != nil {
		_ = resp.Body.Close()
	}
	if ws != nil {
		ws.SetReadLimit(-1)
	}
	return ws, resp, err
}

// Close stops the server and drops the client's idle connections.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.transport.CloseIdleConnections()
}
