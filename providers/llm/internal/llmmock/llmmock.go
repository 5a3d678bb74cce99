package llmmock

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// Response scripts the answer to one request.
type Response struct {
	// Status, when not 0 or 200, is sent with ErrorBody and nothing else.
	Status    int
	ErrorBody string
	// Lines are the SSE data payloads, each framed by Vendor.Frame and
	// flushed on its own. They are sent verbatim: malformed JSON is a
	// fault to inject. After the last line comes Vendor.Trailer, if any.
	Lines []string
	// Raw, when set, is written as it is instead of Lines (for lines the
	// data framing cannot express).
	Raw string
	// StallBefore holds the connection open, sending nothing, before the
	// data line of that index (0: before the first event; len(Lines):
	// before the trailer or the end of the body) until the client goes away or the server closes.
	// -1 or Stall false: no stall.
	Stall       bool
	StallBefore int
	// StallHeaders holds the connection before the response headers.
	StallHeaders bool
	// StallFor, when positive, bounds a stall (Stall or StallHeaders): the
	// response goes on after it, as from a slow service. 0: the stall
	// lasts until the client goes away or the server closes.
	StallFor time.Duration
	// Cut ends the body after the lines without the trailer and the
	// chunked terminator, as a dropped connection.
	Cut bool
	// Pace waits this long before each line (a steady stream).
	Pace time.Duration
}

// Vendor is what one vendor's mock adds to the core.
type Vendor struct {
	// AuthHeader is the request header Auth records; Headers are the
	// other request headers recorded (Header).
	AuthHeader string
	Headers    []string
	// BasePath is appended to the server's address in URL ("/v1").
	BasePath string
	// IsWarm and IsStream tell the model-list request (answered with
	// WarmBody) and the streaming request apart; anything else is a 404
	// with NotFound. A streaming request whose body is not JSON is a 400
	// with BadRequest.
	IsWarm, IsStream     func(*http.Request) bool
	WarmBody             string
	NotFound, BadRequest string
	// Default answers when the script is empty.
	Default Response
	// Frame writes one data line as the vendor frames it.
	Frame func(w io.Writer, line string) error
	// Trailer, when set, is one more data line after the lines ("[DONE]").
	Trailer string
}

// Server is the mock. Its methods are safe for concurrent use.
type Server struct {
	v       Vendor
	srv     *httptest.Server
	closing chan struct{}
	conns   atomic.Int64
	events  atomic.Int64

	mu        sync.Mutex
	script    []Response
	next      int
	source    func() Response
	requests  []map[string]any
	auth      []string
	headers   map[string][]string
	paths     []string
	warmHits  int
	closeOnce sync.Once
}

// New starts a server on 127.0.0.1:0 answering with script in order; when
// the script runs out, the last Response repeats (a text "ok" when the
// script is empty).
func New(v Vendor, script ...Response) *Server {
	s := newServer(v, script)
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.start()
	return s
}

// NewWithListener is New serving on l instead of a loopback socket: a
// PipeListener, say, for a test in a testing/synctest bubble, where real
// sockets cannot be used. The server owns l and closes it in Close.
func NewWithListener(v Vendor, l net.Listener, script ...Response) *Server {
	s := newServer(v, script)
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(s.handle)}}
	s.start()
	return s
}

func newServer(v Vendor, script []Response) *Server {
	return &Server{v: v, closing: make(chan struct{}), script: script, headers: map[string][]string{}}
}

// start counts the connections and serves.
func (s *Server) start() {
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
}

// SetSource makes every later streaming request take its Response from f
// instead of the script (nil: back to the script). f is called on the
// handler's goroutine, one request at a time.
func (s *Server) SetSource(f func() Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.source = f
}

// URL is the base URL: the server's address and Vendor.BasePath.
func (s *Server) URL() string { return s.srv.URL + s.v.BasePath }

// Conns counts the TCP connections accepted so far.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Events counts the event-stream data lines (the trailer included) the server
// has sent or started to send so far, over all requests: a line is counted
// before it is written, so the count is never behind what a client has
// read. Raw bodies and error responses are not counted.
func (s *Server) Events() int { return int(s.events.Load()) }

// Requests returns the parsed JSON bodies of the streaming requests
// received.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

// Auth returns the Vendor.AuthHeader headers of all requests, warm-ups
// included, in order.
func (s *Server) Auth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// Header returns the values of the request header name (one of
// Vendor.Headers) of all requests, in order.
func (s *Server) Header(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.headers[http.CanonicalHeaderKey(name)]...)
}

// Paths returns the request URIs (path and query) of all requests, in
// order.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// WarmHits counts the model-list requests.
func (s *Server) WarmHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warmHits
}

// Close releases stalled handlers, then shuts the server down and waits
// for its handlers. Safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// hold blocks until the client goes away or the server closes, or for d
// when positive; it tells whether the response may go on.
func (s *Server) hold(r *http.Request, d time.Duration) bool {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-r.Context().Done():
		return false
	case <-s.closing:
		return false
	case <-after:
		return true
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.auth = append(s.auth, r.Header.Get(s.v.AuthHeader))
	for _, h := range s.v.Headers {
		k := http.CanonicalHeaderKey(h)
		s.headers[k] = append(s.headers[k], r.Header.Get(h))
	}
	s.paths = append(s.paths, r.URL.RequestURI())
	s.mu.Unlock()
	switch {
	case s.v.IsWarm(r):
		s.mu.Lock()
		s.warmHits++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, s.v.WarmBody)
		return
	case s.v.IsStream(r):
	default:
		http.Error(w, s.v.NotFound, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	var parsed map[string]any
	if err == nil {
		err = json.Unmarshal(body, &parsed)
	}
	if err != nil {
		http.Error(w, s.v.BadRequest, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, parsed)
	resp := s.v.Default
	switch {
	case s.source != nil:
		resp = s.source()
	case len(s.script) > 0:
		i := min(s.next, len(s.script)-1)
		resp = s.script[i]
		s.next++
	}
	s.mu.Unlock()

	if resp.StallHeaders && !s.hold(r, resp.StallFor) {
		return
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.Status)
		_, _ = io.WriteString(w, resp.ErrorBody)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	if resp.Raw != "" {
		_, _ = io.WriteString(w, resp.Raw)
		_ = rc.Flush()
		return
	}
	// send counts one data line as sent, then writes it: the count leads
	// what the client received (by the line being written at most), never
	// lags it.
	send := func(line string) bool {
		if r.Context().Err() != nil {
			return false
		}
		s.events.Add(1)
		if err := s.v.Frame(w, line); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for i, line := range resp.Lines {
		if resp.Stall && resp.StallBefore == i && !s.hold(r, resp.StallFor) {
			return
		}
		if resp.Pace > 0 {
			select {
			case <-time.After(resp.Pace):
			case <-r.Context().Done():
				return
			case <-s.closing:
				return
			}
		}
		if !send(line) {
			return
		}
	}
	if resp.Stall && resp.StallBefore == len(resp.Lines) && !s.hold(r, resp.StallFor) {
		return
	}
	if resp.Cut {
		// Hijack and close so the chunked body ends without its
		// terminator: a cut, not a clean end.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
			}
		}
		return
	}
	if s.v.Trailer != "" {
		send(s.v.Trailer)
	}
}
