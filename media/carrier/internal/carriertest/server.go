package carriertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/brisvox/brisvox/internal/pipenet"
	"github.com/coder/websocket"
)

// Server serves a handler for a test.
type Server struct {
	srv       *httptest.Server
	transport *http.Transport
}

// NewPipeServer serves h on an in-memory listener; call it inside the
// synctest bubble that uses it.
func NewPipeServer(h http.Handler) *Server {
	ln := pipenet.New()
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	return &Server{srv: srv, transport: &http.Transport{DialContext: ln.DialContext}}
}

// NewLoopbackServer serves h on 127.0.0.1, port 0.
func NewLoopbackServer(h http.Handler) *Server {
	srv := httptest.NewServer(h)
	return &Server{srv: srv, transport: &http.Transport{}}
}

// URL is the ws:// URL of path (with its query).
func (s *Server) URL(path string) string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http") + path
}

// Client is an HTTP client that reaches the server.
func (s *Server) Client() *http.Client { return &http.Client{Transport: s.transport} }

// Dial opens a websocket to path. The response is returned on a failed
// handshake too (its body is closed).
func (s *Server) Dial(ctx context.Context, path string) (*websocket.Conn, *http.Response, error) {
	ws, resp, err := websocket.Dial(ctx, s.URL(path), &websocket.DialOptions{HTTPClient: s.Client()})
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
