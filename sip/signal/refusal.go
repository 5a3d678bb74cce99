package signal

import (
	"strconv"

	"github.com/emiago/sipgo/sip"
)

// Refusal is an error the Application returns from Invite to answer the
// INVITE with a chosen final response: 503 with Retry-After when admission
// says no, 488 when no codec matches, 486, 603... Any other error is
// answered 500.
type Refusal struct {
	// Code is the status code, 300 to 699 (other values answer 500).
	Code int
	// Reason is the reason phrase; empty takes the standard one.
	Reason string
	// RetryAfter, when positive, adds Retry-After (seconds).
	RetryAfter int
	// Headers are added to the response as they are (Warning, Accept...).
	Headers []sip.Header
}

// Error says the code, never the request's contents.
func (r *Refusal) Error() string {
	return "signal: refused with " + strconv.Itoa(r.Code)
}

var _ error = (*Refusal)(nil)
