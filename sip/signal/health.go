package signal

// WithHealth sets the health of the node: while f returns a Refusal (a
// draining node), an OPTIONS outside a dialog is answered with it (503
// with Retry-After) so a balancer that probes with OPTIONS stops sending
// calls; while f returns nil, 200 as without it. f is called per OPTIONS,
// from the request's goroutine, and must be cheap and safe for
// concurrent use.
func WithHealth(f func() *Refusal) Option { return func(o *options) { o.health = f } }

// health is the refusal of an out-of-dialog OPTIONS, nil when healthy.
func (s *Server) health() *Refusal {
	if s.opts.health == nil {
		return nil
	}
	r := s.opts.health()
	if r == nil {
		return nil
	}
	if r.Code < 300 || r.Code > 699 {
		return &Refusal{Code: 503, Reason: r.Reason, RetryAfter: r.RetryAfter, Headers: r.Headers}
	}
	return r
}
