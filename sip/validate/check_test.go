package validate

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// A typical INVITE from a trunk, in pieces the cases change.
const (
	inviteLine = "INVITE sip:+15551234567@brisvox.example.com SIP/2.0"
	typicalSDP = "v=0\r\no=- 1 1 IN IP4 192.0.2.10\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n" +
		"m=audio 40000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\n"
)

var inviteHeaders = []string{
	"Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK776asdhds;rport",
	"Max-Forwards: 70",
	"To: <sip:+15551234567@brisvox.example.com>",
	`From: "Caller" <sip:+15557654321@trunk.example.net>;tag=1928301774`,
	"Call-ID: a84b4c76e66710@192.0.2.10",
	"CSeq: 314159 INVITE",
	"Contact: <sip:+15557654321@192.0.2.10:5060>",
	"Allow: INVITE, ACK, CANCEL, BYE, OPTIONS",
	"Supported: timer",
	"Content-Type: application/sdp",
}

// message is a request's text, built for one case.
type message struct {
	start   string
	headers []string
	body    string
	noCLen  bool // leave Content-Length out (it is added otherwise)
}

func invite() message {
	return message{start: inviteLine, headers: append([]string(nil), inviteHeaders...), body: typicalSDP}
}

// as turns the INVITE into another method, without its body, its
// Content-Type and (but for INVITE) its Contact.
func as(method string) message {
	m := invite()
	m.start = strings.Replace(m.start, "INVITE", method, 1)
	m = m.set("CSeq", "CSeq: 314160 "+method).without("Content-Type")
	m.body = ""
	return m
}

func (m message) text() string {
	var b strings.Builder
	b.WriteString(m.start + "\r\n")
	for _, h := range m.headers {
		b.WriteString(h + "\r\n")
	}
	if !m.noCLen {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(m.body))
	}
	b.WriteString("\r\n" + m.body)
	return b.String()
}

// without removes the headers named name (its full name, as written).
func (m message) without(name string) message {
	var hs []string
	for _, h := range m.headers {
		if !strings.HasPrefix(h, name+":") {
			hs = append(hs, h)
		}
	}
	m.headers = hs
	return m
}

// set replaces the headers named name by line.
func (m message) set(name, line string) message {
	m = m.without(name)
	m.headers = append(m.headers, line)
	return m
}

func (m message) with(lines ...string) message {
	m.headers = append(append([]string(nil), m.headers...), lines...)
	return m
}

func (m message) withBody(body string) message {
	m.body = body
	return m
}

func (m message) withStart(line string) message {
	m.start = line
	return m
}

func parse(t testing.TB, text string) *sip.Request {
	t.Helper()
	msg, err := sip.NewParser().ParseSIP([]byte(text))
	if err != nil {
		t.Fatalf("parser rejected the case's message: %v", err)
	}
	req, ok := msg.(*sip.Request)
	if !ok {
		t.Fatalf("parsed a %T", msg)
	}
	return req
}

type checkCase struct {
	name    string
	msg     message
	opts    Options
	code    int    // pass, or the Refusal's code (0: drop)
	cause   string // the Refusal's cause
	headers string // the Refusal's headers, "Name: value" joined by "|"
}

var checkCases = []checkCase{
	{name: "typical INVITE", msg: invite(), code: pass},
	{name: "typical INVITE on TCP", msg: invite(), opts: Options{Stream: true}, code: pass},
	{name: "OPTIONS probe", msg: as("OPTIONS").without("Contact"), code: pass},
	{name: "BYE", msg: as("BYE"), code: pass},
	{name: "ACK with the late answer", msg: as("ACK").with("Content-Type: application/sdp").withBody(typicalSDP), code: pass},
	{name: "INFO dtmf-relay", msg: as("INFO").with("Content-Type: application/dtmf-relay").withBody("Signal=5\r\nDuration=160\r\n"), code: pass},

	// RFC 3261 §8.1.1: the mandatory headers, each in turn.
	{name: "missing Via", msg: invite().without("Via"), code: 0, cause: CauseMissingVia},
	{name: "missing CSeq", msg: invite().without("CSeq"), code: 0, cause: CauseMissingCSeq},
	{name: "missing Call-ID", msg: invite().without("Call-ID"), code: 0, cause: CauseMissingCallID},
	{name: "missing From", msg: invite().without("From"), code: 400, cause: CauseMissingFrom},
	{name: "missing To", msg: invite().without("To"), code: 400, cause: CauseMissingTo},
	{name: "missing Max-Forwards", msg: invite().without("Max-Forwards"), code: 400, cause: CauseMissingMaxFwd},
	// sipgo adds a Content-Length to a body it read without one, and its
	// stream parser refuses a message without one: what is left to see is
	// a bodiless request without it.
	// Mutation caught: the stream check removed (the case passes).
	{name: "missing Content-Length on TCP", msg: message{start: "OPTIONS sip:a@b.example SIP/2.0", headers: as("OPTIONS").headers, noCLen: true}, opts: Options{Stream: true}, code: 400, cause: CauseMissingCLen},
	{name: "missing Content-Length on UDP", msg: message{start: "OPTIONS sip:a@b.example SIP/2.0", headers: as("OPTIONS").headers, noCLen: true}, code: pass},
	{name: "no Content-Length on UDP", msg: message{start: inviteLine, headers: inviteHeaders, body: typicalSDP, noCLen: true}, code: pass},
	{name: "compact forms", msg: message{start: inviteLine, body: typicalSDP, headers: []string{
		"v: SIP/2.0/UDP 192.0.2.10;branch=z9hG4bKc1", "Max-Forwards: 70", "t: <sip:a@b.example>",
		"f: <sip:c@d.example>;tag=1", "i: c1@192.0.2.10", "CSeq: 1 INVITE", "m: <sip:c@192.0.2.10>",
		"c: application/sdp"}}, code: pass},

	{name: "SIP version 3.0", msg: invite().withStart(strings.Replace(inviteLine, "SIP/2.0", "SIP/3.0", 1)), code: 505, cause: CauseVersion},
	{name: "sip version lower case", msg: invite().withStart(strings.Replace(inviteLine, "SIP/2.0", "sip/2.0", 1)), code: pass},
	{name: "Max-Forwards 0", msg: invite().set("Max-Forwards", "Max-Forwards: 0"), code: 483, cause: CauseTooManyHops},
	// Mutation caught: 483 on every method.
	{name: "Max-Forwards 0 on OPTIONS", msg: as("OPTIONS").set("Max-Forwards", "Max-Forwards: 0"), code: pass},
	{name: "Max-Forwards 256", msg: invite().set("Max-Forwards", "Max-Forwards: 256"), code: 400, cause: CauseBadMaxFwd},
	{name: "CSeq method differs", msg: invite().set("CSeq", "CSeq: 314159 BYE"), code: 400, cause: CauseCSeqMismatch},
	// Mutation caught: the CSeq method compared with == (sipgo upper-cases
	// the request line only).
	{name: "CSeq method in lower case", msg: invite().set("CSeq", "CSeq: 314159 invite"), code: pass},
	{name: "CSeq method not a token", msg: invite().set("CSeq", "CSeq: 314159 IN(VITE"), code: 400, cause: CauseBadCSeq},

	{name: "From without tag", msg: invite().set("From", "From: <sip:+15557654321@trunk.example.net>"), code: 400, cause: CauseMissingFromTag},
	{name: "From with empty tag", msg: invite().set("From", "From: <sip:+15557654321@trunk.example.net>;tag="), code: 400, cause: CauseMissingFromTag},
	{name: "From tel URI", msg: invite().set("From", "From: <tel:+15557654321>;tag=9"), code: pass},
	{name: "From http URI", msg: invite().set("From", "From: <http://example.com/>;tag=9"), code: 400, cause: CauseBadFrom},
	{name: "From without host", msg: invite().set("From", "From: <sip:alice@>;tag=9"), code: 400, cause: CauseBadFrom},
	{name: "To urn URI", msg: invite().set("To", "To: <urn:service:sos>"), code: 400, cause: CauseBadTo},
	{name: "Request-URI urn scheme", msg: invite().withStart("INVITE urn:service:sos SIP/2.0"), code: 416, cause: CauseURIScheme},
	{name: "Request-URI tel", msg: invite().withStart("INVITE tel:+15551234567 SIP/2.0"), code: pass},
	{name: "Request-URI with headers", msg: invite().withStart("INVITE sip:a@b.example?Route=%3Csip:c.example%3E SIP/2.0"), code: 400, cause: CauseBadRequestURI},
	{name: "Via branch only the cookie", msg: invite().set("Via", "Via: SIP/2.0/UDP 192.0.2.10;branch=z9hG4bK"), code: 400, cause: CauseBadBranch},
	{name: "Via without branch", msg: invite().set("Via", "Via: SIP/2.0/UDP 192.0.2.10"), code: pass},
	{name: "Call-ID with a space", msg: invite().set("Call-ID", "Call-ID: a b@c"), code: 400, cause: CauseBadCallID},
	{name: "Call-ID two at signs", msg: invite().set("Call-ID", "Call-ID: a@b@c"), code: 400, cause: CauseBadCallID},

	// Bodies.
	{name: "INVITE body text/plain", msg: invite().set("Content-Type", "Content-Type: text/plain"), code: 415, cause: CauseBodyType, headers: "Accept: application/sdp"},
	{name: "INVITE body type with parameters and case", msg: invite().set("Content-Type", "Content-Type: Application/SDP ; charset=utf-8"), code: pass},
	{name: "INFO body application/sdp", msg: as("INFO").with("Content-Type: application/sdp").withBody(typicalSDP), code: 415, cause: CauseBodyType, headers: "Accept: application/dtmf-relay, application/dtmf"},
	{name: "OPTIONS with a body", msg: as("OPTIONS").with("Content-Type: text/plain").withBody("hello"), code: 415, cause: CauseBodyType, headers: "Accept: "},
	{name: "BYE with a body", msg: as("BYE").with("Content-Type: text/plain").withBody("hello"), code: pass},
	{name: "body without Content-Type", msg: invite().without("Content-Type"), code: 400, cause: CauseMissingCType},
	{name: "gzip body", msg: invite().with("Content-Encoding: gzip"), code: 415, cause: CauseContentEncoding, headers: "Accept-Encoding: identity"},
	{name: "identity encoding", msg: invite().with("e: identity"), code: pass},
	{name: "body above MaxBody", msg: invite(), opts: Options{MaxBody: 100}, code: 413, cause: CauseBodyTooLarge},
	{name: "body above MaxBody without Content-Length", msg: message{start: inviteLine, headers: inviteHeaders, body: typicalSDP, noCLen: true}, opts: Options{MaxBody: 100}, code: 413, cause: CauseBodyTooLarge},
	{name: "custom Accept map", msg: invite(), opts: Options{Accept: map[sip.RequestMethod][]string{sip.INVITE: {"multipart/mixed"}}}, code: 415, cause: CauseBodyType, headers: "Accept: multipart/mixed"},
	{name: "Accept without SDP", msg: invite().with("Accept: text/nobodyKnowsThis"), code: 406, cause: CauseNotAcceptable},
	{name: "Accept application/*", msg: invite().with("Accept: text/plain, application/*;q=0.5"), code: pass},
	{name: "Accept SDP with q=0", msg: invite().with("Accept: application/sdp;q=0.0, text/plain"), code: 406, cause: CauseNotAcceptable},
	{name: "Accept SDP with q=0.5", msg: invite().with("Accept: application/sdp;level=1;q=0.5"), code: pass},
	{name: "Accept empty", msg: invite().with("Accept:"), code: 406, cause: CauseNotAcceptable},
	{name: "Accept on OPTIONS", msg: as("OPTIONS").with("Accept: text/plain"), code: pass},

	// Extensions.
	{name: "Require 100rel", msg: invite().with("Require: 100rel"), code: 420, cause: CauseUnsupported, headers: "Unsupported: 100rel"},
	{name: "Require timer supported", msg: invite().with("Require: timer"), opts: Options{Supported: []string{"timer"}}, code: pass},
	{name: "Require two, one supported", msg: invite().with("Require: timer, 100rel", "Require: 100rel,precondition"), opts: Options{Supported: []string{"timer"}}, code: 420, cause: CauseUnsupported, headers: "Unsupported: 100rel, precondition"},
	{name: "Require on ACK ignored", msg: as("ACK").with("Require: 100rel"), code: pass},
	{name: "Require tag too long", msg: invite().with("Require: " + strings.Repeat("x", 65)), code: 400, cause: CauseBadRequire},
	{name: "Require of many tags", msg: invite().with("Require: " + manyTags(40)), code: 420, cause: CauseUnsupported, headers: "Unsupported: " + manyTags(16)},
	{name: "Require not a token", msg: invite().with("Require: 100rel;x"), code: 400, cause: CauseBadRequire},
	{name: "Proxy-Require ignored", msg: invite().with("Proxy-Require: foo"), code: pass},

	// Header injection: sipgo ends lines at CRLF only, so a bare LF
	// stays in the parsed value.
	{name: "LF in an extension header", msg: invite().with("Subject: hi\nX-Injected: yes"), code: 400, cause: CauseBadHeader},
	{name: "CR LF folded is fine", msg: invite().with("Subject: hi", " there"), code: pass},
	{name: "LF in the From tag", msg: invite().set("From", "From: <sip:a@b.example>;tag=1\nX-Injected: yes"), code: 400, cause: CauseBadHeader},
	{name: "LF in a Via parameter", msg: invite().set("Via", "Via: SIP/2.0/UDP 192.0.2.10;branch=z9hG4bK1;x=a\nb"), code: 400, cause: CauseBadHeader},
	{name: "Via port not a number", msg: invite().set("Via", "Via: SIP/2.0/UDP 192.0.2.10:50x;branch=z9hG4bK1"), code: 400, cause: CauseBadVia},
	{name: "second Via unreadable", msg: invite().with("Via: SIP/2.0/UDP 192.0.2.11:x;branch=z9hG4bK2"), code: pass},
	{name: "NUL in an extension header", msg: invite().with("Subject: a\x00b"), code: 400, cause: CauseBadHeader},
	{name: "NUL in a header name", msg: invite().with("X-A\x00b: c"), code: 400, cause: CauseBadHeader},
	{name: "NUL in the Request-URI", msg: invite().withStart("INVITE sip:a\x00b@c.example SIP/2.0"), code: 400, cause: CauseBadHeader},
	{name: "ESC in the display name", msg: invite().set("From", "From: \"a\x1bb\" <sip:a@b.example>;tag=1"), code: 400, cause: CauseBadHeader},
	{name: "DEL in the Call-ID", msg: invite().set("Call-ID", "Call-ID: a\x7fb"), code: 400, cause: CauseBadHeader},
	// Mutation caught: clean() without the quoted-pair exception.
	{name: "escaped NUL in a quoted display name", msg: invite().set("From", "From: \"a\\\x00b\" <sip:a@b.example>;tag=1"), code: pass},
	{name: "unescaped NUL in a quoted parameter", msg: invite().set("From", "From: <sip:a@b.example>;tag=1;x=\"a\x00\""), code: 400, cause: CauseBadHeader},
	{name: "tab in a header value", msg: invite().with("Subject: a\tb"), code: pass},
	{name: "UTF-8 in a display name", msg: invite().set("From", "From: \"Zoë\" <sip:a@b.example>;tag=1"), code: pass},

	// Single-valued headers twice (RFC 4475 multi01, mcl01).
	{name: "two equal Call-IDs", msg: invite().with("Call-ID: a84b4c76e66710@192.0.2.10"), code: 400, cause: CauseDuplicateCallID},
	{name: "two CSeqs", msg: invite().with("CSeq: 1 INVITE"), code: 400, cause: CauseDuplicateCSeq},
	{name: "two Froms", msg: invite().with("From: <sip:x@y.example>;tag=2"), code: 400, cause: CauseDuplicateFrom},
	{name: "two Tos", msg: invite().with("To: <sip:x@y.example>"), code: 400, cause: CauseDuplicateTo},
	{name: "two Max-Forwards", msg: invite().with("Max-Forwards: 69"), code: 400, cause: CauseDuplicateMaxFwd},
	{name: "two Content-Types", msg: invite().with("Content-Type: application/sdp"), code: 400, cause: CauseDuplicateCType},
	{name: "two Content-Lengths that agree", msg: invite().with(fmt.Sprintf("Content-Length: %d", len(typicalSDP))), code: pass},
	{name: "two Content-Lengths that disagree", msg: message{start: inviteLine, headers: append(append([]string(nil), inviteHeaders...), "Content-Length: 5", fmt.Sprintf("l: %d", len(typicalSDP))), body: typicalSDP, noCLen: true}, code: 400, cause: CauseConflictingCLen},
	{name: "INVITE without Contact", msg: invite().without("Contact"), code: 400, cause: CauseMissingContact},
	{name: "INVITE with two Contacts", msg: invite().with("Contact: <sip:x@192.0.2.11>"), code: 400, cause: CauseDuplicateContact},
	{name: "INVITE with two Contact values", msg: invite().set("Contact", "Contact: <sip:x@192.0.2.11>, <sip:y@192.0.2.12>"), code: 400, cause: CauseDuplicateContact},
	{name: "INVITE with a tel Contact", msg: invite().set("Contact", "Contact: <tel:+15557654321>"), code: 400, cause: CauseBadContact},
	{name: "INVITE with a wildcard Contact", msg: invite().set("Contact", "Contact: *"), code: 400, cause: CauseBadContact},

	// The header bound.
	{name: "headers at the bound", msg: invite(), opts: Options{MaxHeaders: 11}, code: pass},
	{name: "headers above the bound", msg: invite(), opts: Options{MaxHeaders: 10}, code: 0, cause: CauseTooManyHeaders},
}

// manyTags is "t0, t1, ..." of n tags.
func manyTags(n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("t%d", i)
	}
	return strings.Join(tags, ", ")
}

func TestCheck(t *testing.T) {
	for _, c := range checkCases {
		t.Run(c.name, func(t *testing.T) {
			req := parse(t, c.msg.text())
			assertOutcome(t, req, c.opts, c.code, c.cause, c.headers)
		})
	}
}

func assertOutcome(t *testing.T, req *sip.Request, o Options, code int, cause, headers string) {
	t.Helper()
	r := Check(req, o)
	if code == pass {
		if r != nil {
			t.Fatalf("refused: %v", r)
		}
		assertComplete(t, req, o)
		return
	}
	if r == nil {
		t.Fatalf("passed; want %d %s", code, cause)
	}
	if r.Code != code || r.Cause != cause {
		t.Fatalf("got %v; want %d %s", r, code, cause)
	}
	var got []string
	for _, h := range r.Headers {
		got = append(got, h.Name()+": "+h.Value())
	}
	if g := strings.Join(got, "|"); g != headers {
		t.Fatalf("headers %q; want %q", g, headers)
	}
	want := ErrRefused
	if code == 0 {
		want = ErrDropped
	}
	if !errors.Is(r, want) {
		t.Fatalf("%v does not wrap %v", r, want)
	}
}

// TestCheckBuiltRequests: requests the parser could not produce (it
// refuses them itself) but other code could build, held to the same
// rules, and requests built with sipgo's generic headers.
func TestCheckBuiltRequests(t *testing.T) {
	cases := []struct {
		name  string
		build func(t *testing.T) *sip.Request
		code  int
		cause string
	}{
		{"nil request", func(*testing.T) *sip.Request { return nil }, 0, CauseNoRequest},
		{"CSeq above 2^31-1", func(t *testing.T) *sip.Request {
			req := parse(t, invite().text())
			req.ReplaceHeader(&sip.CSeqHeader{SeqNo: 1 << 31, MethodName: sip.INVITE})
			return req
		}, 400, CauseBadCSeq},
		{"Content-Length larger than the body", func(t *testing.T) *sip.Request {
			req := parse(t, invite().text())
			cl := sip.ContentLengthHeader(len(typicalSDP) + 1)
			req.ReplaceHeader(&cl)
			return req
		}, 400, CauseCLenMismatch},
		{"Content-Length smaller than the body", func(t *testing.T) *sip.Request {
			req := parse(t, invite().text())
			cl := sip.ContentLengthHeader(1)
			req.ReplaceHeader(&cl)
			return req
		}, 400, CauseCLenMismatch},
		{"escaped LF in a display name", func(t *testing.T) *sip.Request {
			req := parse(t, invite().text())
			req.From().DisplayName = "a\\\nb"
			return req
		}, 400, CauseBadHeader},
		{"built with generic headers", func(t *testing.T) *sip.Request {
			req := sip.NewRequest(sip.OPTIONS, sip.Uri{Scheme: "sip", User: "a", Host: "b.example"})
			for _, h := range []string{"Via: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK1", "From: <sip:c@d.example>;tag=1",
				"To: <sip:a@b.example>", "Call-ID: x1", "CSeq: 2 OPTIONS", "Max-Forwards: 70", "Content-Length: 0"} {
				name, value, _ := strings.Cut(h, ": ")
				req.AppendHeader(sip.NewHeader(name, value))
			}
			return req
		}, pass, ""},
		{"generic Max-Forwards not a number", func(t *testing.T) *sip.Request {
			req := parse(t, invite().without("Max-Forwards").text())
			req.AppendHeader(sip.NewHeader("Max-Forwards", "seventy"))
			return req
		}, 400, CauseBadMaxFwd},
		{"generic Content-Length not a number", func(t *testing.T) *sip.Request {
			req := parse(t, invite().without("Content-Type").withBody("").text())
			req.RemoveHeader("Content-Length")
			req.AppendHeader(sip.NewHeader("Content-Length", "x"))
			return req
		}, 400, CauseCLenMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertOutcome(t, c.build(t), Options{}, c.code, c.cause, "")
		})
	}
}

// TestCheckCountsFirst guards the order: with more headers than the
// bound, the cause is the count, whatever else is wrong (here no From).
// Mutation caught: the bound checked after the survey of the headers
// (the cause becomes missing_from).
func TestCheckCountsFirst(t *testing.T) {
	m := invite().without("From")
	for i := 0; i < 10000; i++ {
		m.headers = append(m.headers, fmt.Sprintf("Via: SIP/2.0/UDP 192.0.2.%d;branch=z9hG4bK%d", i%250, i))
	}
	req := sip.NewRequest(sip.INVITE, sip.Uri{Scheme: "sip", Host: "b.example"})
	for _, h := range m.headers {
		name, value, _ := strings.Cut(h, ": ")
		req.AppendHeader(sip.NewHeader(name, value))
	}
	r := Check(req, Options{})
	if r == nil || r.Code != 0 || r.Cause != CauseTooManyHeaders {
		t.Fatalf("got %v; want a drop for too many headers", r)
	}
}

func TestRefusalError(t *testing.T) {
	cases := []struct {
		r    *Refusal
		want string
	}{
		{ruleMissingFrom.refuse(), "validate: 400 Missing From: missing_from"},
		{ruleMissingVia.refuse(), "validate: dropped: missing_via"},
	}
	for _, c := range cases {
		if got := c.r.Error(); got != c.want {
			t.Errorf("Error() = %q; want %q", got, c.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"zero", Options{}, true},
		{"full", Options{Stream: true, MaxBody: 1, MaxHeaders: 1, Supported: []string{"timer"},
			Accept: map[sip.RequestMethod][]string{sip.INVITE: {"application/sdp"}, sip.OPTIONS: {}}}, true},
		{"negative MaxBody", Options{MaxBody: -1}, false},
		{"negative MaxHeaders", Options{MaxHeaders: -1}, false},
		{"tag not a token", Options{Supported: []string{"a b"}}, false},
		{"type not type/subtype", Options{Accept: map[sip.RequestMethod][]string{sip.INVITE: {"sdp"}}}, false},
		{"method not a token", Options{Accept: map[sip.RequestMethod][]string{"IN VITE": nil}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.o.Validate()
			if c.ok != (err == nil) {
				t.Fatalf("Validate() = %v", err)
			}
			if err != nil && !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("%v does not wrap ErrInvalidOptions", err)
			}
		})
	}
}
