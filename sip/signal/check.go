package signal

import (
	"strings"

	"github.com/emiago/sipgo/sip"
)

// validate checks a request before any handler logic: the mandatory
// headers, Max-Forwards, the extensions it requires, the body size.
func (s *Server) validate(req *sip.Request, stream bool) *Refusal {
	if req.Via() == nil || req.CSeq() == nil || req.CallID() == nil {
		return &Refusal{} // too broken to answer
	}
	if req.From() == nil || req.To() == nil {
		return &Refusal{Code: 400, Reason: "Missing From or To"}
	}
	if !req.From().Params.Has("tag") {
		return &Refusal{Code: 400, Reason: "Missing From tag"}
	}
	if req.CSeq().MethodName != req.Method {
		return &Refusal{Code: 400, Reason: "CSeq Method Mismatch"}
	}
	if mf := req.MaxForwards(); mf != nil && mf.Val() == 0 {
		return &Refusal{Code: 483}
	}
	if stream && req.ContentLength() == nil {
		return &Refusal{Code: 400, Reason: "Missing Content-Length"}
	}
	if len(req.Body()) > s.cfg.MaxBody {
		return &Refusal{Code: 413}
	}
	if len(req.Headers()) > s.cfg.MaxHeaders {
		return &Refusal{Code: 400, Reason: "Too Many Headers"}
	}
	for _, n := range []string{"Require", "Proxy-Require"} {
		for _, h := range req.GetHeaders(n) {
			for t := range strings.SplitSeq(h.Value(), ",") {
				if t = strings.TrimSpace(t); t != "" && !strings.EqualFold(t, "timer") {
					return &Refusal{Code: 420, Headers: []sip.Header{sip.NewHeader("Unsupported", t)}}
				}
			}
		}
	}
	return nil
}
