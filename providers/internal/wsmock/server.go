package wsmock

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/brisvox/brisvox/providers/providertest"
)

// Request is what the server saw of one handshake.
type Request struct {
	Path   string
	Query  url.Values
	Header http.Header
}

// SessionFunc is a vendor's side of one session. It returns when the
// session is over; the server then closes the connection (CloseNow) if
// the function did not.
type SessionFunc func(c *Conn)

// Option changes how New starts the server.
type Option func(*options)

type options struct{ listener net.Listener }

// WithListener serves on l (a PipeListener, for a test in a
// testing/synctest bubble) instead of 127.0.0.1:0. The server owns l.
func WithListener(l net.Listener) Option { return func(o *options) { o.listener = l } }

// Server is the mock core. Its methods are safe for concurrent use.
type Server struct {
	srv     *httptest.Server
	session SessionFunc
	closing chan struct{}
	wg      sync.WaitGroup // session handlers (hijacked, not tracked by httptest)

	handshakes, sessions, sent, received, pings atomic.Int64

	mu        sync.Mutex
	faults    []Fault
	requests  []Request
	conns     map[*Conn]struct{}
	closeOnce sync.Once
}

// New starts a server that runs session for each accepted websocket.
func New(session SessionFunc, opts ...Option) *Server {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{session: session, closing: make(chan struct{}), conns: map[*Conn]struct{}{}}
	if o.listener != nil {
		s.srv = &httptest.Server{Listener: o.listener, Config: &http.Server{Handler: http.HandlerFunc(s.handle)}}
	} else {
		s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	}
	s.srv.Start()
	return s
}

// URL is the server's ws:// root followed by path ("/v1/listen").
func (s *Server) URL(path string) string {
	return "ws" + strings.TrimPrefix(s.srv.URL, "http") + path
}

// Inject queues f for the next handshake.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

// ClearFaults drops the faults not yet used.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// Requests returns the handshakes seen so far, refused ones included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Handshakes counts the handshake requests; Sessions the accepted
// websockets; Sent the messages sent with Conn.Send (counted before they
// are written, so never behind what a client read); Received the client
// messages read.
func (s *Server) Handshakes() int { return int(s.handshakes.Load()) }

// Sessions counts the accepted websockets.
func (s *Server) Sessions() int { return int(s.sessions.Load()) }

// Sent counts the messages sent with Conn.Send.
func (s *Server) Sent() int { return int(s.sent.Load()) }

// Received counts the client messages read.
func (s *Server) Received() int { return int(s.received.Load()) }

// Pings counts the websocket pings the sessions read, answered or not.
func (s *Server) Pings() int { return int(s.pings.Load()) }

// Close releases stalled handshakes and sessions, cuts every session and
// waits for the session functions and the server. Safe to call more than
// once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.mu.Lock()
		for c := range s.conns {
			_ = c.ws.CloseNow()
		}
		s.mu.Unlock()
		s.srv.CloseClientConnections()
		s.srv.Close()
		s.wg.Wait()
	})
}

func (s *Server) popFault() Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return Fault{}
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f
}

// hold waits d (0: for good) or until done or the server closes; it tells
// whether to go on.
func (s *Server) hold(done <-chan struct{}, d time.Duration) bool {
	var after <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		after = t.C
	}
	select {
	case <-after:
		return true
	case <-done:
		return false
	case <-s.closing:
		return false
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.handshakes.Add(1)
	req := Request{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	f := s.popFault()
	switch f.Kind {
	case providertest.FaultConnectStall:
		if !s.hold(r.Context().Done(), f.Duration) {
			return
		}
	case providertest.FaultReject:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(f.RefuseBody))
		return
	}
	deaf := &atomic.Bool{}
	deaf.Store(f.NoPong)
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OnPingReceived: func(context.Context, []byte) bool {
		s.pings.Add(1)
		return !deaf.Load()
	}})
	if err != nil {
		return
	}
	ws.SetReadLimit(-1)
	s.wg.Add(1)
	defer s.wg.Done()
	s.sessions.Add(1)
	c := &Conn{srv: s, ws: ws, req: req, fault: f, deaf: deaf, gone: make(chan struct{}), wake: make(chan struct{}, 1), readerDone: make(chan struct{})}
	s.mu.Lock()
	select {
	case <-s.closing:
		s.mu.Unlock()
		_ = ws.CloseNow()
		return
	default:
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	go c.read()
	s.session(c)
	_ = ws.CloseNow()
	<-c.readerDone
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Message is one client message.
type Message struct {
	Binary bool
	Data   []byte
}

// Conn is the server side of one session.
type Conn struct {
	srv   *Server
	ws    *websocket.Conn
	req   Request
	fault Fault
	sent  int
	deaf  *atomic.Bool // answer no ping (Fault.NoPong, until message BeforeEvent)

	gone       chan struct{} // closed when the client side is gone
	goneOnce   sync.Once
	wake       chan struct{}
	readerDone chan struct{}

	mu    sync.Mutex
	inbox []Message
}

// Request is the session's handshake.
func (c *Conn) Request() Request { return c.req }

// Gone is closed when the connection has ended.
func (c *Conn) Gone() <-chan struct{} { return c.gone }

// read is the session's reader goroutine: it keeps reading, whatever the
// session function does, into an unbounded inbox.
func (c *Conn) read() {
	defer close(c.readerDone)
	defer c.goneOnce.Do(func() { close(c.gone) })
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		c.srv.received.Add(1)
		c.mu.Lock()
		c.inbox = append(c.inbox, Message{Binary: typ == websocket.MessageBinary, Data: data})
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// Next returns the next client message, waiting for it; ErrConnClosed
// once the connection ended and the inbox is empty, or the server closes.
func (c *Conn) Next() (Message, error) {
	for {
		c.mu.Lock()
		if len(c.inbox) > 0 {
			m := c.inbox[0]
			c.inbox = c.inbox[1:]
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-c.gone:
			c.mu.Lock()
			empty := len(c.inbox) == 0
			c.mu.Unlock()
			if empty {
				return Message{}, ErrConnClosed
			}
		case <-c.srv.closing:
			return Message{}, ErrConnClosed
		}
	}
}

// Send sends one vendor message (a text frame), counted, with the
// session's fault applied when this is message fault.BeforeEvent.
func (c *Conn) Send(text []byte) error { return c.send(false, text) }

// SendBinary is Send for a binary vendor message (audio): counted, with
// the fault applied, as Send.
func (c *Conn) SendBinary(data []byte) error { return c.send(true, data) }

func (c *Conn) send(binary bool, data []byte) error {
	n := c.sent
	c.sent++
	if n == c.fault.BeforeEvent {
		switch c.fault.Kind {
		case providertest.FaultDisconnect:
			_ = c.ws.CloseNow()
			return ErrConnClosed
		case providertest.FaultStall, providertest.FaultDelay:
			if !c.srv.hold(c.gone, c.fault.Duration) {
				return ErrConnClosed
			}
		case providertest.FaultProtocol:
			c.deaf.Store(false)
			c.srv.sent.Add(1)
			return c.violate(c.fault.Violation)
		}
		c.deaf.Store(false)
	}
	c.srv.sent.Add(1)
	return c.write(binary, data)
}

// SendRaw sends a frame as it is: not counted, no fault.
func (c *Conn) SendRaw(binary bool, data []byte) error { return c.write(binary, data) }

// CloseWith does the close handshake with code and reason.
func (c *Conn) CloseWith(code int, reason string) error {
	return c.ws.Close(websocket.StatusCode(code), reason)
}

// Drop cuts the connection without a close frame.
func (c *Conn) Drop() { _ = c.ws.CloseNow() }

func (c *Conn) violate(v Violation) error {
	switch v {
	case ViolateBinary:
		return c.write(true, []byte{0x00, 0x01, 0x02})
	case ViolateOversized:
		big := bytes.Repeat([]byte("a"), OversizedBytes)
		big[0], big[len(big)-1] = '"', '"'
		return c.write(false, big)
	}
	return c.write(false, []byte(`{"type":"Results",`))
}

func (c *Conn) write(binary bool, data []byte) error {
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	// Close cuts every session, which ends a blocked write.
	if err := c.ws.Write(context.Background(), typ, data); err != nil {
		return ErrConnClosed
	}
	return nil
}
