package signal

import (
	"time"

	"github.com/emiago/sipgo/sip"
)

// maxEarlyLegs bounds the early dialogs one Dial keeps (one per callee
// tag: forks); the requests of a callee past the bound get 481.
const maxEarlyLegs = 8

// earlyLeg is the early dialog of one of our dials with one callee: a
// 18x named its To tag, no 2xx came yet (RFC 3261 12.1, 13.2.2.1). It
// is not a Dialog (no loop, no Media: Answered has not run); it only
// answers the callee's requests until the dial ends.
type earlyLeg struct {
	localTag string
	// bye takes the callee's BYE: the dial ends (one slot, never
	// blocks).
	bye chan<- struct{}
}

// addEarlyLeg registers the early dialog a provisional response res of
// rec's INVITE makes, once per To tag and at most maxEarlyLegs.
func (s *Server) addEarlyLeg(rec *dialing, res *sip.Response, bye chan<- struct{}) {
	to := res.To()
	if to == nil {
		return
	}
	tag, _ := to.Params.Get("tag")
	if tag == "" {
		return
	}
	k := dialogKey{callID: rec.tmpl.callID, local: rec.tmpl.localTag, remote: tag}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.earlyOut[k]; ok || len(rec.early) >= maxEarlyLegs {
		return
	}
	s.earlyOut[k] = &earlyLeg{localTag: rec.tmpl.localTag, bye: bye}
	rec.early = append(rec.early, k)
}

// dropEarlyLegs forgets rec's early dialogs: a final response ended them
// (RFC 3261 12.3), or the dial did.
func (s *Server) dropEarlyLegs(rec *dialing) {
	s.mu.Lock()
	for _, k := range rec.early {
		delete(s.earlyOut, k)
	}
	rec.early = nil
	s.mu.Unlock()
}

// lookupEarly finds the early dialog of one of our dials a request of
// the callee names.
func (s *Server) lookupEarly(req *sip.Request) *earlyLeg {
	local, _ := req.To().Params.Get("tag")
	remote, _ := req.From().Params.Get("tag")
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.earlyOut[dialogKey{callID: req.CallID().Value(), local: local, remote: remote}]
}

// earlyLegRequest answers a callee's request in the early dialog of our
// dial. A BYE ends the dial (the callee hung up before answering: RFC
// 3261 15 forbids it to the callee, gateways do it anyway): 200, then
// our CANCEL and DialRejected. An UPDATE with an offer gets 491 (our
// INVITE's offer is still open: an unreliable 18x's SDP is no answer,
// RFC 3311 5.2, RFC 6337 3.1), one without an offer 200; OPTIONS and
// INFO 200 (there is no Media yet to hand an INFO to: counted
// early-info); REFER 403 and NOTIFY 481 as in a dialog; a re-INVITE
// 500 with Retry-After (RFC 3261 14.2); other methods as outside one.
func (s *Server) earlyLegRequest(e *earlyLeg, req *sip.Request, tx serverTx) {
	switch req.Method {
	case sip.BYE:
		s.respond(tx, req, 200, "", e.localTag, nil)
		select {
		case e.bye <- struct{}{}:
		default:
		}
	case sip.OPTIONS:
		s.respond(tx, req, 200, "", e.localTag, nil, capabilityHeaders()...)
	case sip.UPDATE:
		if len(req.Body()) > 0 {
			s.respond(tx, req, 491, "Request Pending", e.localTag, nil)
			return
		}
		s.respond(tx, req, 200, "", e.localTag, nil)
	case sip.INFO:
		s.stats.drop("early-info")
		s.respond(tx, req, 200, "", e.localTag, nil)
	case sip.REFER:
		s.respond(tx, req, 403, "Forbidden", e.localTag, nil)
	case sip.NOTIFY:
		s.respond(tx, req, 481, "", e.localTag, nil)
	case sip.INVITE:
		s.respond(tx, req, 500, "", e.localTag, nil, retryAfter(int(1+s.env.jitter(9*time.Second)/time.Second)))
	default:
		code, reason, allow := methodRefusal(req.Method)
		s.respond(tx, req, code, reason, e.localTag, nil, allow)
	}
}
