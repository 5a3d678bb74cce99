package serve

import "github.com/brisvox/brisvox/media/conn"

// Health is the refusal every new call gets while the server drains (a
// shutdown or an operator's drain), nil while it admits calls: what a
// load balancer's health probe should hear (the SIP transport answers
// OPTIONS 503 with it). A full server is still healthy: its calls end and
// it takes new ones again.
func (s *Server) Health() *conn.Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drainRefusalLocked()
}

// drainRefusalLocked is the refusal of a draining node (shutting down, or
// drained by an operator), nil while it admits calls.
func (s *Server) drainRefusalLocked() *conn.Refusal {
	switch {
	case s.draining:
		return &conn.Refusal{Cause: conn.RefusedDraining, Detail: "shutting down", RetryAfter: s.cfg.RetryAfter}
	case s.opDrain != nil:
		return &conn.Refusal{Cause: conn.RefusedDraining, Detail: "drained by an operator", RetryAfter: s.cfg.RetryAfter}
	}
	return nil
}
