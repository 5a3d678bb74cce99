package validate

import (
	"strconv"
	"strings"

	"github.com/emiago/sipgo/sip"
)

// maxCSeq is the largest CSeq number (RFC 3261 §8.1.1.5: below 2^31).
const maxCSeq = 1<<31 - 1

// maxMaxForwards: Max-Forwards is an integer in 0-255 (RFC 3261 §20.22).
const maxMaxForwards = 255

// magicCookie starts an RFC 3261 branch (§8.1.1.7).
const magicCookie = "z9hG4bK"

// Check says whether req may go on to the handlers: nil if it may, or
// the Refusal to answer (or, Code 0, to drop it). It reads only the
// parsed request, and allocates nothing for a request it lets through.
// The checks and the choices they make are listed in the package doc.
func Check(req *sip.Request, o Options) *Refusal {
	if req == nil {
		return ruleNoRequest.refuse()
	}
	hs := req.Headers()
	// Counting comes first, before any work per header: a request with
	// 10 000 Vias costs us a length and nothing more.
	if len(hs) > o.maxHeaders() {
		return ruleTooManyHeaders.refuse()
	}
	var s survey
	s.take(hs)

	// Too broken to answer: a response could not find its way back (no
	// Via) or be matched (no CSeq, no Call-ID).
	if s.vias == 0 || req.Via() == nil {
		return ruleMissingVia.refuse()
	}
	cseq := req.CSeq()
	if s.cseqs == 0 || cseq == nil {
		return ruleMissingCSeq.refuse()
	}
	if s.callIDs == 0 {
		return ruleMissingCallID.refuse()
	}

	if !strings.EqualFold(req.SipVersion, "SIP/2.0") {
		return ruleVersion.refuse()
	}
	if s.bad || !plain(string(req.Method)) || !uriClean(&req.Recipient) {
		return ruleBadHeader.refuse()
	}

	if r := s.single(); r != nil {
		return r
	}
	if !isToken(string(req.Method)) {
		return ruleBadMethod.refuse()
	}
	if cseq.SeqNo > maxCSeq || !isToken(strings.Trim(string(cseq.MethodName), " \t")) {
		return ruleBadCSeq.refuse()
	}
	if !strings.EqualFold(strings.Trim(string(cseq.MethodName), " \t"), string(req.Method)) {
		return ruleCSeqMismatch.refuse()
	}
	if !isCallID(s.callID) {
		return ruleBadCallID.refuse()
	}
	// Only the top Via is ours to read. sipgo leaves its host empty when
	// it cannot read the sent-by (a port that is not a number) instead of
	// failing; the Vias below it it may misread (RFC 4475 wsinv) unharmed.
	if via := req.Via(); via.Host == "" || via.Transport == "" {
		return ruleBadVia.refuse()
	}
	if !s.maxFwdOK || s.maxFwd > maxMaxForwards {
		return ruleBadMaxFwd.refuse()
	}
	if branch, ok := paramGet(req.Via().Params, "branch"); ok && branch == magicCookie {
		return ruleBadBranch.refuse()
	}

	from, to := req.From(), req.To()
	if from == nil || !addressURI(&from.Address) {
		return ruleBadFrom.refuse()
	}
	if to == nil || !addressURI(&to.Address) {
		return ruleBadTo.refuse()
	}
	if tag, ok := paramGet(from.Params, "tag"); !ok || tag == "" {
		return ruleMissingFromTag.refuse()
	}

	if r := requestURI(&req.Recipient); r != nil {
		return r
	}
	if s.maxFwd == 0 && req.Method != sip.OPTIONS {
		return ruleTooManyHops.refuse()
	}

	if r := s.body(req, o); r != nil {
		return r
	}

	if req.Method == sip.INVITE {
		if r := s.inviteContact(req); r != nil {
			return r
		}
	}

	if s.requires > 0 && req.Method != sip.ACK && req.Method != sip.CANCEL {
		if r := unsupported(hs, o.Supported); r != nil {
			return r
		}
	}

	if s.accepts > 0 && !s.acceptSDP && (req.Method == sip.INVITE || req.Method == sip.UPDATE) {
		return ruleNotAcceptable.refuse()
	}
	return nil
}

// survey is what one pass over the headers found: how many of each
// single-valued header, their values where they are plain, and whether
// any header carries a control character.
type survey struct {
	bad bool // a header with a control character or a bad name

	vias, froms, tos, cseqs, contacts int

	callIDs int
	callID  string

	maxFwds  int
	maxFwd   uint64
	maxFwdOK bool

	cLens     int
	cLen      uint64
	cLenOK    bool
	cLenClash bool

	cTypes int
	cType  string

	cEncoding string // the first Content-Encoding, "" without

	requires  int
	accepts   int
	acceptSDP bool
}

func (s *survey) take(hs []sip.Header) {
	for _, h := range hs {
		switch h := h.(type) {
		case *sip.ViaHeader:
			s.vias++
			s.bad = s.bad || !viaClean(h)
		case *sip.FromHeader:
			s.froms++
			s.bad = s.bad || !addressClean(h.DisplayName, &h.Address, h.Params)
		case *sip.ToHeader:
			s.tos++
			s.bad = s.bad || !addressClean(h.DisplayName, &h.Address, h.Params)
		case *sip.ContactHeader:
			s.contacts++
			s.bad = s.bad || !addressClean(h.DisplayName, &h.Address, h.Params)
		case *sip.CallIDHeader:
			s.callIDValue(string(*h))
		case *sip.CSeqHeader:
			s.cseqs++
			s.bad = s.bad || !plain(string(h.MethodName))
		case *sip.MaxForwardsHeader:
			s.maxFwdValue(uint64(*h), true)
		case *sip.ContentLengthHeader:
			s.cLenValue(uint64(*h), true)
		case *sip.ContentTypeHeader:
			s.cTypes++
			s.cType = string(*h)
			s.bad = s.bad || !clean(s.cType, false)
		case *sip.RouteHeader:
			s.bad = s.bad || !uriClean(&h.Address)
		case *sip.RecordRouteHeader:
			s.bad = s.bad || !uriClean(&h.Address)
		case *sip.ReferToHeader:
			s.bad = s.bad || !uriClean(&h.Address)
		case *sip.ReferredByHeader:
			s.bad = s.bad || !addressClean(h.DisplayName, &h.Address, h.Params)
		default:
			s.generic(h)
		}
	}
}

// generic takes a header sipgo keeps as text: an extension header, or
// one of the structured headers when a request was built by hand.
func (s *survey) generic(h sip.Header) {
	name, value := h.Name(), h.Value()
	if !isToken(name) || !clean(value, false) {
		s.bad = true
		return
	}
	switch headerKind(name) {
	case kindVia:
		s.vias++
	case kindFrom:
		s.froms++
	case kindTo:
		s.tos++
	case kindCSeq:
		s.cseqs++
	case kindContact:
		s.contacts++
	case kindCallID:
		s.callIDValue(strings.Trim(value, " \t"))
	case kindMaxFwd:
		n, err := strconv.ParseUint(strings.Trim(value, " \t"), 10, 32)
		s.maxFwdValue(n, err == nil)
	case kindCLen:
		n, err := strconv.ParseUint(strings.Trim(value, " \t"), 10, 32)
		s.cLenValue(n, err == nil)
	case kindCType:
		s.cTypes++
		s.cType = value
	case kindCEncoding:
		if s.cEncoding == "" {
			s.cEncoding = value
		}
	case kindRequire:
		s.requires++
	case kindAccept:
		s.accepts++
		for rest := value; rest != ""; {
			var item string
			item, rest = nextItem(rest)
			s.acceptSDP = s.acceptSDP || acceptsSDP(item)
		}
	}
}

// The headers Check reads, by kind.
type kind int

const (
	kindOther kind = iota
	kindVia
	kindFrom
	kindTo
	kindCSeq
	kindContact
	kindCallID
	kindMaxFwd
	kindCLen
	kindCType
	kindCEncoding
	kindRequire
	kindAccept
)

// headerKind names a header by its long or compact name, any case. It
// looks at the first letter before comparing names: most extension
// headers are told apart in one step.
func headerKind(name string) kind {
	if name == "" {
		return kindOther
	}
	switch name[0] | 0x20 {
	case 'v':
		if is(name, "via", "v") {
			return kindVia
		}
	case 'f':
		if is(name, "from", "f") {
			return kindFrom
		}
	case 't':
		if is(name, "to", "t") {
			return kindTo
		}
	case 'm':
		switch {
		case is(name, "", "m"):
			return kindContact
		case is(name, "max-forwards", ""):
			return kindMaxFwd
		}
	case 'i':
		if is(name, "", "i") {
			return kindCallID
		}
	case 'l':
		if is(name, "", "l") {
			return kindCLen
		}
	case 'e':
		if is(name, "", "e") {
			return kindCEncoding
		}
	case 'r':
		if is(name, "require", "") {
			return kindRequire
		}
	case 'a':
		if is(name, "accept", "") {
			return kindAccept
		}
	case 'c':
		switch {
		case is(name, "cseq", ""):
			return kindCSeq
		case is(name, "contact", ""):
			return kindContact
		case is(name, "call-id", ""):
			return kindCallID
		case is(name, "content-length", ""):
			return kindCLen
		case is(name, "content-type", "c"):
			return kindCType
		case is(name, "content-encoding", ""):
			return kindCEncoding
		}
	}
	return kindOther
}

// is: name is long or compact ("" for none), in any case.
func is(name, long, compact string) bool {
	return (long != "" && strings.EqualFold(name, long)) || (compact != "" && strings.EqualFold(name, compact))
}

func (s *survey) callIDValue(v string) {
	s.callIDs++
	if s.callIDs == 1 {
		s.callID = v
	}
	s.bad = s.bad || !plain(v)
}

func (s *survey) maxFwdValue(n uint64, ok bool) {
	s.maxFwds++
	if s.maxFwds == 1 {
		s.maxFwd, s.maxFwdOK = n, ok
	}
}

func (s *survey) cLenValue(n uint64, ok bool) {
	s.cLens++
	switch {
	case s.cLens == 1:
		s.cLen, s.cLenOK = n, ok
	case !ok || !s.cLenOK || n != s.cLen:
		s.cLenClash = true
	}
}

// single checks the headers that must be there once. Two Call-IDs are
// refused even when equal, two Content-Lengths only when they disagree
// (RFC 4475 mcl01).
func (s *survey) single() *Refusal {
	switch {
	case s.froms == 0:
		return ruleMissingFrom.refuse()
	case s.tos == 0:
		return ruleMissingTo.refuse()
	case s.maxFwds == 0:
		return ruleMissingMaxFwd.refuse()
	case s.callIDs > 1:
		return ruleDuplicateCallID.refuse()
	case s.cseqs > 1:
		return ruleDuplicateCSeq.refuse()
	case s.froms > 1:
		return ruleDuplicateFrom.refuse()
	case s.tos > 1:
		return ruleDuplicateTo.refuse()
	case s.maxFwds > 1:
		return ruleDuplicateMaxFwd.refuse()
	case s.cTypes > 1:
		return ruleDuplicateCType.refuse()
	case s.cLenClash:
		return ruleConflictingCLen.refuse()
	}
	return nil
}

// body checks the Content-Length against the transport, the bound and
// the body, then the body's type against what the method takes.
func (s *survey) body(req *sip.Request, o Options) *Refusal {
	body := req.Body()
	switch {
	case s.cLens == 0 && o.Stream:
		return ruleMissingCLen.refuse()
	case s.cLens > 0 && !s.cLenOK:
		return ruleCLenMismatch.refuse()
	case s.cLens > 0 && s.cLen > uint64(o.maxBody()), len(body) > o.maxBody():
		return ruleBodyTooLarge.refuse()
	case s.cLens > 0 && s.cLen != uint64(len(body)):
		return ruleCLenMismatch.refuse()
	}
	if len(body) == 0 {
		return nil
	}
	if s.cTypes == 0 {
		return ruleMissingCType.refuse()
	}
	types, judged := o.accepted(req.Method)
	if !judged {
		return nil
	}
	if e := strings.Trim(s.cEncoding, " \t"); e != "" && !strings.EqualFold(e, "identity") {
		return ruleContentEncoding.refuse(sip.NewHeader("Accept-Encoding", "identity"))
	}
	t := mediaType(s.cType)
	for _, a := range types {
		if strings.EqualFold(t, a) {
			return nil
		}
	}
	return ruleBodyType.refuse(sip.NewHeader("Accept", strings.Join(types, ", ")))
}

// inviteContact: an INVITE has exactly one Contact, a SIP or SIPS URI
// (RFC 3261 §8.1.1.8): it is the dialog's remote target.
func (s *survey) inviteContact(req *sip.Request) *Refusal {
	switch {
	case s.contacts == 0:
		return ruleMissingContact.refuse()
	case s.contacts > 1:
		return ruleDuplicateContact.refuse()
	}
	c := req.Contact()
	if c == nil || c.Address.Wildcard || !sipURI(&c.Address) {
		return ruleBadContact.refuse()
	}
	return nil
}

// Bounds on what a 420 echoes: the answer to a Require of thousands of
// made-up tags stays small.
const (
	maxTagLen      = 64
	maxUnsupported = 16
)

// unsupported answers a Require naming a tag not in supported: 420 with
// an Unsupported header listing those tags (RFC 3261 §8.2.2.3), the first
// maxUnsupported of them. Only here does a refusal carry request text,
// each piece checked a token of at most maxTagLen bytes.
func unsupported(hs []sip.Header, supported []string) *Refusal {
	var missing []string
	for _, h := range hs {
		if headerKind(h.Name()) != kindRequire {
			continue
		}
		for rest := h.Value(); rest != ""; {
			var tag string
			tag, rest = nextItem(rest)
			if tag == "" {
				continue
			}
			if !isToken(tag) || len(tag) > maxTagLen {
				return ruleBadRequire.refuse()
			}
			if len(missing) < maxUnsupported && !contains(supported, tag) && !contains(missing, tag) {
				missing = append(missing, tag)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return ruleUnsupported.refuse(sip.NewHeader("Unsupported", strings.Join(missing, ", ")))
}

func contains(tags []string, tag string) bool {
	for _, t := range tags {
		if strings.EqualFold(t, tag) {
			return true
		}
	}
	return false
}

// requestURI: sip, sips or tel (416 otherwise, RFC 3261 §8.2.2.1); a
// SIP URI with a host and without ?headers (RFC 4475 escruri).
func requestURI(u *sip.Uri) *Refusal {
	switch u.Scheme {
	case "sip", "sips":
		if u.Host == "" || u.Wildcard || len(u.Headers) > 0 {
			return ruleBadRequestURI.refuse()
		}
	case "tel":
		if u.Raw() == "" {
			return ruleBadRequestURI.refuse()
		}
	default:
		return ruleURIScheme.refuse()
	}
	return nil
}

// addressURI: a From or To names a sip, sips or tel URI.
func addressURI(u *sip.Uri) bool {
	if u.Scheme == "tel" {
		return u.Raw() != ""
	}
	return sipURI(u)
}

func sipURI(u *sip.Uri) bool {
	return (u.Scheme == "sip" || u.Scheme == "sips") && u.Host != "" && !u.Wildcard
}

// paramGet looks a parameter up by name, tolerating the whitespace
// sipgo leaves around a name (RFC 4475 wsinv: "tag = 98asjd8").
func paramGet(ps sip.HeaderParams, name string) (string, bool) {
	for _, kv := range ps {
		if strings.EqualFold(strings.Trim(kv.K, " \t"), name) {
			return strings.Trim(kv.V, " \t"), true
		}
	}
	return "", false
}

func viaClean(h *sip.ViaHeader) bool {
	return plain(h.ProtocolName) && plain(h.ProtocolVersion) && plain(h.Transport) &&
		plain(h.Host) && paramsClean(h.Params)
}

func addressClean(display string, u *sip.Uri, ps sip.HeaderParams) bool {
	return clean(display, true) && uriClean(u) && paramsClean(ps)
}

func uriClean(u *sip.Uri) bool {
	return plain(u.Scheme) && plain(u.Raw()) && plain(u.User) && plain(u.Password) &&
		plain(u.Host) && paramsClean(u.UriParams) && paramsClean(u.Headers)
}

func paramsClean(ps sip.HeaderParams) bool {
	for _, kv := range ps {
		if !plain(kv.K) || !clean(kv.V, false) {
			return false
		}
	}
	return true
}
