package signal

import (
	"context"
	"net/netip"
)

// Application is the integrator's side of a call: it decides whether to
// answer an INVITE and brings the media.
type Application interface {
	// Invite is asked for a new, validated, authenticated INVITE, in its
	// own goroutine, after the 100 and the configured 180 or 183. ctx ends
	// on CANCEL, Close, or a Hangup of the dialog before the answer. offer
	// is nil for a late offer: then local is our offer, and its answer
	// reaches Media.Answer from the ACK. Returning m with local answers
	// 200; an error that is a *Refusal is answered with its code, any
	// other error 500 (m is ignored then). Once m is returned, m.Ended is
	// called exactly once, whatever ends the call (even a CANCEL that
	// raced the answer).
	Invite(ctx context.Context, inv *Invite) (m Media, local []byte, err error)
}

// Invite is one new INVITE as the Application sees it.
type Invite struct {
	// Dialog is the dialog the 200 will create (Hangup, Describe).
	Dialog *Dialog
	// Source is the address the INVITE came from.
	Source netip.AddrPort
	// Transport is "UDP", "TCP" or "TLS".
	Transport string
	// Offer is the SDP body, nil for a late offer.
	Offer []byte
	// From and To are the user parts of the INVITE's From and To URIs as
	// received (a tel: URI's number; "" when a URI has none): the caller
	// and the number called. Personal data: never logged.
	From, To string
}

// Media is the media side of one dialog. Its methods are called from the
// dialog's own goroutine, one at a time, in the order of the signalling;
// they must not call back into the dialog synchronously except Hangup
// (which only posts).
type Media interface {
	// Reoffer takes a new offer (re-INVITE or UPDATE: hold, resume, a new
	// address) and returns the answer. offer nil (an offerless re-INVITE)
	// asks for our offer; the answer then comes to Answer. An error that
	// is a *Refusal is answered with its code (488...), any other 488.
	Reoffer(offer []byte) (answer []byte, err error)
	// Answer takes their answer to our offer, from an ACK (late offer,
	// offerless re-INVITE). An error ends the call (BYE, ErrBadAnswer).
	Answer(answer []byte) error
	// Info takes an INFO in the dialog (DTMF) and returns the status code
	// to answer (200, 415...).
	Info(contentType string, body []byte) int
	// Confirmed says the ACK of our first 2xx came.
	Confirmed()
	// Ended is called once, with the cause (ErrRemoteBye, ErrAckTimeout...).
	Ended(cause error)
}
