package signal

import (
	"github.com/brisvox/brisvox/sip/validate"
	"github.com/emiago/sipgo/sip"
)

// supportedTags are the option tags we support (Require with any other is
// answered 420 with Unsupported: 100rel among them).
var supportedTags = []string{"timer"}

// validate checks a request before any handler logic (sip/validate): the
// mandatory headers, Max-Forwards, the SIP version, the extensions it
// requires, the body's type and size. A nil result: fine; Code 0: drop.
func (s *Server) validate(req *sip.Request, stream bool) *Refusal {
	r := validate.Check(req, validate.Options{
		Stream:     stream,
		MaxBody:    s.cfg.MaxBody,
		MaxHeaders: s.cfg.MaxHeaders,
		Supported:  supportedTags,
	})
	if r == nil {
		return nil
	}
	if r.Code == 0 || req.IsAck() {
		s.stats.drop("invalid-" + r.Cause)
	}
	return &Refusal{Code: r.Code, Reason: r.Reason, Headers: r.Headers}
}
