package serve

import (
	"fmt"
	"net/http"
	"time"
)

// NodeInfo is a node as the operator API shows it.
type NodeInfo struct {
	Node string `json:"node"`
	// Self: the node that answered.
	Self      bool `json:"self"`
	LiveCalls int  `json:"live_calls"`
	MaxCalls  int  `json:"max_calls"`
	// Draining: the node admits no new call (Drain says why and since
	// when; nil when it admits).
	Draining  bool           `json:"draining"`
	Drain     *drainInfo     `json:"drain,omitempty"`
	Admission *admissionBody `json:"admission,omitempty"`
	UptimeMS  int64          `json:"uptime_ms"`
}

// drainInfo is a drain of a node: by an operator or for a shutdown.
type drainInfo struct {
	By          string    `json:"by"`
	Started     time.Time `json:"started"`
	LiveAtStart int       `json:"live_at_start"`
}

// Node is this node's entry in the operator API.
func (s *Server) Node() NodeInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodeLocked()
}

func (s *Server) nodeLocked() NodeInfo {
	n := NodeInfo{
		Node: s.cfg.Node, Self: true, LiveCalls: len(s.live), MaxCalls: s.cfg.MaxCalls,
		UptimeMS: time.Since(s.born).Milliseconds(),
	}
	switch {
	case s.shutdown != nil:
		n.Draining, n.Drain = true, s.shutdown
	case s.opDrain != nil:
		n.Draining, n.Drain = true, s.opDrain
	}
	if m := s.cfg.Meter; m != nil {
		e := m.Estimate()
		n.Admission = &admissionBody{Estimate: e, Load: e.Load(len(s.live))}
	}
	return n
}

// Drain stops this node admitting calls, as an operator asked: the live
// calls go on to their end (nothing is cut, no deadline), new ones are
// refused as draining on every transport (503, SIP 503 and OPTIONS 503,
// /readyz 503) until Undrain. A second Drain keeps the first one's start.
func (s *Server) Drain() NodeInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opDrain == nil {
		s.opDrain = &drainInfo{By: "operator", Started: time.Now().UTC(), LiveAtStart: len(s.live)}
		s.stats.Inc("operator_drains")
		s.log.Info().Str("node", s.cfg.Node).Int("live_calls", len(s.live)).Msg("drained by an operator: not admitting calls")
		s.notifyLocked()
	}
	return s.nodeLocked()
}

// Undrain admits calls again after an operator's Drain; a node shutting
// down stays draining (ErrRefused).
func (s *Server) Undrain() (NodeInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return s.nodeLocked(), fmt.Errorf("%w: the node is shutting down", ErrRefused)
	}
	if s.opDrain != nil {
		s.opDrain = nil
		s.log.Info().Str("node", s.cfg.Node).Msg("undrained by an operator: admitting calls")
		s.notifyLocked()
	}
	return s.nodeLocked(), nil
}

func (s *Server) drainNode(w http.ResponseWriter, r *http.Request) {
	node := r.PathValue("node")
	f, err := s.nodeTarget(node)
	if err != nil {
		operatorError(w, err)
		return
	}
	n := s.Node()
	if f == nil {
		n = s.Drain()
	} else {
		ctx, cancel := fleetContext(r.Context())
		n, err = f.Drain(ctx, node)
		cancel()
		n.Self = false
	}
	if err != nil {
		operatorError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, n)
}

func (s *Server) undrainNode(w http.ResponseWriter, r *http.Request) {
	node := r.PathValue("node")
	f, err := s.nodeTarget(node)
	if err != nil {
		operatorError(w, err)
		return
	}
	var n NodeInfo
	if f == nil {
		n, err = s.Undrain()
	} else {
		ctx, cancel := fleetContext(r.Context())
		n, err = f.Undrain(ctx, node)
		cancel()
		n.Self = false
	}
	if err != nil {
		operatorError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, n)
}
