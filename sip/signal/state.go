package signal

import "time"

// State is where a dialog is.
type State int

// States of a dialog.
const (
	// StateEarly: the INVITE is being decided (Application.Invite).
	StateEarly State = iota
	// StateAnswered: our 2xx went, the ACK has not come.
	StateAnswered
	// StateConfirmed: the ACK came.
	StateConfirmed
	// StateTerminated: ended; Media.Ended was called (when a Media
	// existed).
	StateTerminated
)

var stateNames = [...]string{"early", "answered", "confirmed", "terminated"}

// String names the state.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

// DialogInfo is a dialog as the operator sees it (Describe). It holds no
// number, header or body.
type DialogInfo struct {
	// ID is our call id ("sip-" and 16 hex digits), the one in logs.
	ID string
	// State is the dialog's state.
	State State
	// Transport is "UDP", "TCP" or "TLS".
	Transport string
	// SessionExpires is the negotiated session interval (0: none) and
	// Refresher who refreshes, in the roles of the dialog's first INVITE:
	// "uac" (the caller: us on a call we placed), "uas" or "".
	SessionExpires time.Duration
	Refresher      string
	// Retransmits counts our 2xx retransmissions, Refreshes the session
	// refreshes (theirs and ours) that succeeded.
	Retransmits, Refreshes int
	// OfferPending says an offer/answer exchange is open.
	OfferPending bool
	// Cause is why it ended (nil while it lives).
	Cause error
}
