// Package validate checks every SIP request before any handler sees it.
//
// It is the first thing sip/signal does with a request that sipgo
// parsed: Check(req, opts) either lets it through (nil) or says how to
// refuse it (a *Refusal: the code and a short fixed reason phrase to
// answer, the headers to add, and a cause for the drop counters). A
// request that passes Check has every header the dialog logic relies on
// (Via, From with a tag, To, Call-ID, CSeq, Max-Forwards, Content-Length
// on stream transports, a Contact on INVITE), each exactly once where
// RFC 3261 allows one, and no header carries a control character that a
// log, a CDR or a C library downstream could be fooled by.
//
// Check is a pure function of the parsed request: it does no I/O, keeps
// no state and, for a request it lets through, allocates nothing. It
// never echoes the request's contents in a reason phrase; the only
// request text it hands back is the list of unsupported option tags a
// 420 must name (each checked to be a token).
//
// # Decisions
//
// RFC 3261, RFC 4475 (the torture tests) and this project's issue do
// not always agree; where they do not, this is what Check does and why.
//
//   - A request too broken to answer is dropped (Refusal.Code 0): no
//     Via (no way back), no CSeq or no Call-ID (the answer could not be
//     matched to anything; RFC 4475 insuf asks for an "ideal" 400, which
//     would be a response without a Call-ID), more headers than
//     Options.MaxHeaders (10 000 Vias: an answer would copy them all back,
//     so answering is an amplifier).
//   - Max-Forwards is mandatory (RFC 3261 §8.1.1: "MUST, at a minimum,
//     contain"): a request without it gets 400 "Missing Max-Forwards".
//     RFC 2543 clients omitted it; they omitted the From tag too, and
//     RFC 4475 §3.4.1 (inv2543) only asks elements "that want to maintain
//     backwards compatibility" to accept them. We do not: RFC 2543 was
//     obsoleted in 2002 and without the From tag a dialog cannot be
//     matched the RFC 3261 way. A missing Via branch, on the other hand,
//     is accepted (sipgo matches such transactions the RFC 2543 way, and
//     RFC 4475's valid longreq and wsinv have none); a branch that is
//     exactly the magic cookie "z9hG4bK" is refused 400 (RFC 4475
//     badbranch allows either).
//   - Max-Forwards 0 is answered 483, except on OPTIONS: RFC 3261 §16.3
//     lets the element that would forward an OPTIONS answer it itself,
//     RFC 4475 zeromf (an OPTIONS) says an endpoint should process it,
//     and SBCs ping their next hop with OPTIONS and Max-Forwards 0.
//     A Max-Forwards above 255 is 400 (RFC 4475 scalar02).
//   - A body is judged by Options.Accept for its method. A method absent
//     from the map is not judged here: BYE and CANCEL bodies are ignored
//     (refusing a BYE would leave the call up), and methods we do not
//     implement (REGISTER, MESSAGE...) are answered 405/501 by the
//     handler. OPTIONS, the "GET-like" method, takes no body: one is 415
//     with an empty Accept. A body needs a Content-Type (400 without), and
//     a Content-Encoding other than identity is 415 with Accept-Encoding.
//   - An INVITE or UPDATE whose Accept headers admit no application/sdp
//     (an empty Accept, or only q=0 for it) is 406 (RFC 4475 sdp01): our
//     answer would carry SDP.
//   - Require is honoured on every method but ACK and CANCEL (RFC 3261
//     §8.2.2.3); Proxy-Require is a proxy's business and ignored.
//   - Methods are compared with the CSeq method case-insensitively:
//     sipgo upper-cases the request line's method but not the CSeq's
//     (RFC 4475 intmeth would otherwise be refused).
//   - Control characters (below 0x20 but HTAB, and DEL) are refused in
//     every header name, value and URI, except inside a quoted-pair of a
//     quoted string, which RFC 3261 §25.1 allows (RFC 4475 intmeth has
//     BEL, NUL and DEL there); CR and LF are refused even there. sipgo
//     splits lines at CRLF only, so a bare LF reaches the parsed value:
//     that is the header injection this refuses.
//   - Only the top Via is read: one whose host sipgo could not read
//     (it leaves it empty for a port that is not a number) is 400; the
//     Vias below it are the proxies' business (sipgo misreads some of
//     RFC 4475 wsinv's, a valid message).
//   - An INVITE has exactly one Contact, a sip or sips URI (RFC 3261
//     §8.1.1.8): it is the dialog's remote target.
//   - From and To take sip, sips and tel URIs (400 otherwise); the
//     Request-URI takes the same schemes (416 otherwise, RFC 3261
//     §8.2.2.1) and no ?headers (400, RFC 4475 escruri).
//
// What Check cannot see, sipgo's parser has already refused (the request
// never reaches Check): a Content-Length larger than the datagram, a
// negative one, a CSeq number above 2^31-1, a message above the parser's
// 65535 bytes. Check repeats the checks it can make on a parsed request
// (a Content-Length that disagrees with the body, a CSeq out of range), so
// a request built or reassembled by other code is held to the same rules.
//
// NewSlogHandler is the slog.Handler given to sipgo: sipgo logs whole
// messages, start lines and parse errors quoting header lines as
// attributes; the handler keeps the level and, from a list of sipgo's
// constant messages, the message, and drops and counts every attribute.
package validate
