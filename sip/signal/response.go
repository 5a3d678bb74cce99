package signal

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo/sip"
)

// Our capabilities, the same in and out of a dialog.
const (
	allowValue     = "INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE"
	acceptValue    = "application/sdp, application/dtmf-relay, application/dtmf"
	supportedValue = "timer"
)

// capabilityHeaders are Allow, Accept and Supported (Allow first).
func capabilityHeaders() []sip.Header {
	return []sip.Header{
		sip.NewHeader("Allow", allowValue),
		sip.NewHeader("Accept", acceptValue),
		sip.NewHeader("Supported", supportedValue),
	}
}

// methodRefusal is the answer to a method we do not serve: 405 with Allow
// for the ones RFC 3261 and its extensions define, 501 for others.
func methodRefusal(m sip.RequestMethod) (int, string, sip.Header) {
	switch m {
	case sip.REGISTER, sip.MESSAGE, sip.SUBSCRIBE, sip.NOTIFY, sip.PUBLISH, sip.PRACK:
		return 405, "Method Not Allowed", sip.NewHeader("Allow", allowValue)
	}
	return 501, "Not Implemented", sip.NewHeader("Allow", allowValue)
}

// reasons are the phrases of the codes we send.
var reasons = map[int]string{
	100: "Trying", 180: "Ringing", 183: "Session Progress", 200: "OK",
	400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
	405: "Method Not Allowed", 406: "Not Acceptable", 408: "Request Timeout",
	413: "Request Entity Too Large", 415: "Unsupported Media Type",
	416: "Unsupported URI Scheme", 420: "Bad Extension", 422: "Session Interval Too Small",
	480: "Temporarily Unavailable", 481: "Call/Transaction Does Not Exist", 482: "Loop Detected",
	483: "Too Many Hops", 486: "Busy Here", 487: "Request Terminated",
	488: "Not Acceptable Here", 491: "Request Pending", 500: "Server Internal Error",
	501: "Not Implemented", 503: "Service Unavailable", 505: "Version Not Supported",
	600: "Busy Everywhere", 603: "Decline",
}

// reasonPhrase is the standard phrase of code, or a generic one by class.
func reasonPhrase(code int) string {
	if r, ok := reasons[code]; ok {
		return r
	}
	switch code / 100 {
	case 1:
		return "Session Progress"
	case 2:
		return "OK"
	case 3:
		return "Redirect"
	case 4:
		return "Request Failure"
	case 5:
		return "Server Error"
	}
	return "Global Failure"
}

// buildResponse is a response to req carrying our tag in To (when the
// request's To has none and the code is not 100).
func buildResponse(req *sip.Request, code int, reason string, body []byte, tag string, hs ...sip.Header) *sip.Response {
	if reason == "" {
		reason = reasonPhrase(code)
	}
	res := sip.NewResponseFromRequest(req, code, reason, body)
	if to := req.To(); to != nil && code != 100 && tag != "" && !to.Params.Has("tag") {
		// NewResponseFromRequest invented a tag; ours names the dialog.
		if rto := res.To(); rto != nil {
			rto.Params.Add("tag", tag)
		}
	}
	for _, h := range hs {
		if h != nil {
			res.AppendHeader(h)
		}
	}
	if len(body) > 0 && res.ContentType() == nil {
		ct := sip.ContentTypeHeader("application/sdp")
		res.AppendHeader(&ct)
	}
	return res
}

func retryAfter(secs int) sip.Header {
	return sip.NewHeader("Retry-After", strconv.Itoa(secs))
}

func (r *Refusal) headers() []sip.Header {
	hs := append([]sip.Header(nil), r.Headers...)
	if r.RetryAfter > 0 {
		hs = append(hs, retryAfter(r.RetryAfter))
	}
	return hs
}

func contentType(req *sip.Request) string {
	if ct := req.ContentType(); ct != nil {
		return ct.Value()
	}
	return ""
}

// contactURIOr is the URI of the request's Contact, nil without one.
func contactURIOr(req *sip.Request) *sip.Uri {
	c := req.Contact()
	if c == nil || c.Address.Host == "" || c.Address.Wildcard {
		return nil
	}
	return c.Address.Clone()
}

// contactURI is the remote target: the Contact, or the source address.
func contactURI(req *sip.Request, src netip.AddrPort) sip.Uri {
	if u := contactURIOr(req); u != nil {
		return *u
	}
	return sip.Uri{Scheme: "sip", Host: src.Addr().String(), Port: int(src.Port())}
}

// recordRoutes is the route set: the Record-Route URIs in their order
// (RFC 3261 12.1.1).
func recordRoutes(req *sip.Request) []sip.Uri {
	var out []sip.Uri
	for _, h := range req.GetHeaders("Record-Route") {
		if rr, ok := h.(*sip.RecordRouteHeader); ok {
			out = append(out, *rr.Address.Clone())
		}
	}
	return out
}

// negotiate applies RFC 4028 to a request that may refresh the session:
// the interval and refresher to answer, or a Refusal (422 below our
// Min-SE, 400 for a bad value).
func negotiate(req *sip.Request, cfg *Config) (time.Duration, refresher, *Refusal) {
	minSE := cfg.MinSE
	if v, ok := header(req, "Min-SE", ""); ok {
		m, err := parseMinSE(v)
		if err != nil {
			return 0, refresherNone, &Refusal{Code: 400, Reason: "Bad Min-SE"}
		}
		minSE = max(minSE, time.Duration(m)*time.Second)
	}
	uacTimer := hasToken(req, "Supported", "k", "timer")
	v, ok := header(req, "Session-Expires", "x")
	if !ok {
		if cfg.SessionExpires <= 0 {
			return 0, refresherNone, nil
		}
		return max(cfg.SessionExpires, minSE), refresherUAS, nil
	}
	secs, r, err := parseSessionExpires(v)
	if err != nil {
		return 0, refresherNone, &Refusal{Code: 400, Reason: "Bad Session-Expires"}
	}
	se := time.Duration(secs) * time.Second
	if se < cfg.MinSE {
		return 0, refresherNone, &Refusal{Code: 422, Reason: "Session Interval Too Small",
			Headers: []sip.Header{sip.NewHeader("Min-SE", strconv.Itoa(int(cfg.MinSE/time.Second)))}}
	}
	if cfg.SessionExpires > 0 && se > cfg.SessionExpires {
		se = max(cfg.SessionExpires, minSE)
	}
	switch {
	case !uacTimer:
		r = refresherUAS
	case r == refresherNone:
		r = refresherUAC
	}
	return se, r, nil
}

// hostPort splits a listener address for Via and Contact.
func hostPort(addr string) (string, int) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		i := strings.LastIndexByte(addr, ':')
		if i < 0 {
			return addr, 0
		}
		p, _ := strconv.Atoi(addr[i+1:])
		return addr[:i], p
	}
	return ap.Addr().String(), int(ap.Port())
}
