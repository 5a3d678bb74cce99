package serve

import "github.com/brisvox/brisvox/media/conn"

// Health is the refusal every new call gets while the server drains, nil
// while it admits calls: what a load balancer's health probe should hear
// (the SIP transport answers OPTIONS 503 with it). A full server is still
// healthy: its calls end and it takes new ones again.
func (s *Server) Health() *conn.Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.draining {
		return nil
	}
	return &conn.Refusal{Cause: conn.RefusedDraining, Detail: "shutting down", RetryAfter: s.cfg.RetryAfter}
}
