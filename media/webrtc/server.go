package webrtc

import (
	"net/http"
	"sync"

	"github.com/brisvox/brisvox/internal/ratelog"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// Server accepts WebRTC calls: it answers offers, runs the signaling
// websocket of each call and hands every accepted call to Config.OnCall.
type Server struct {
	cfg   Config
	opts  options
	log   zerolog.Logger
	stats counters
	// origins are Config.AllowedOrigins, normalized.
	origins []string
	// refusals and rejects tally the offers refused (by cause) and the
	// offers that failed after admission (by reason): a flood writes a
	// line per interval, not one per request.
	refusals, rejects *ratelog.Tally

	mu     sync.Mutex
	calls  map[string]*Call
	closed bool
	// live counts the calls not yet torn down, so Close can wait for them.
	live sync.WaitGroup
}

// New makes a server for cfg. It opens nothing: sockets belong to calls.
func New(cfg Config, opts ...Option) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg.withDefaults(), log: cfg.Logger, calls: map[string]*Call{},
		origins:  normalOrigins(cfg.AllowedOrigins),
		refusals: ratelog.New(cfg.Logger, "webrtc offers refused", 0),
		rejects:  ratelog.New(cfg.Logger, "webrtc offers failed", 0),
	}
	for _, o := range opts {
		o(&s.opts)
	}
	return s, nil
}

// Handler serves the signaling under the prefix the caller mounts it at:
// POST /offer (and its CORS preflight) and GET /ws?call=<id> (see the
// package doc).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /offer", s.serveOffer)
	mux.HandleFunc("OPTIONS /offer", s.servePreflight)
	mux.HandleFunc("GET /ws", s.serveWS)
	return mux
}

// Stats returns a snapshot of the server's counters: offers and calls,
// bad offers by reason, websocket errors, calls ended by reason, and the
// media counters summed over calls.
func (s *Server) Stats() map[string]uint64 {
	m := s.stats.snapshot()
	s.mu.Lock()
	m["calls_live"] = uint64(len(s.calls))
	s.mu.Unlock()
	return m
}

// Calls is the number of calls not yet ended and torn down.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// Close refuses new offers, hangs up every call and waits until each one
// has stopped its goroutines. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	calls := make([]*Call, 0, len(s.calls))
	for _, c := range s.calls {
		calls = append(calls, c)
	}
	s.mu.Unlock()
	for _, c := range calls {
		c.Hangup(conn.EndGoingAway, "server closed")
	}
	s.live.Wait()
	s.refusals.Close()
	s.rejects.Close()
	return nil
}

// register adds a call unless the server is closed.
func (s *Server) register(c *Call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.calls[c.id] = c
	s.live.Add(1)
	return true
}

// forget removes a torn-down call.
func (s *Server) forget(c *Call) {
	s.mu.Lock()
	delete(s.calls, c.id)
	s.mu.Unlock()
	s.live.Done()
}

func (s *Server) lookup(id string) *Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
