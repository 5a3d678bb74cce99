package conn

import (
	"errors"
	"fmt"
	"time"
)

// ErrRefused is wrapped by every *Refusal: a new call was not admitted.
var ErrRefused = errors.New("transport: call not admitted")

// Admission is the slot a new call was admitted into. A transport asks
// for it (an Admitter) before any upgrade or media set-up, and hands it
// to the server with the call (Admitted); the server frees it when the
// call ends. The slot is counted from the reservation on, so admission
// never overshoots its limit, however many callers arrive at once.
type Admission interface {
	// Release gives the slot back when no call will be started with it:
	// the upgrade failed, the offer was bad, the caller left first. Once
	// the call was started it does nothing (the server frees the slot
	// when the call ends). Safe to call more than once, from any
	// goroutine.
	Release()
}

// Admitter reserves a slot for a new call. A refusal is a *Refusal.
type Admitter func() (Admission, error)

// Admitted is a served call's connection that carries the slot it was
// admitted into; the server takes the slot when it starts the call.
type Admitted interface {
	Admission() Admission
}

// RefusalCause is why a call was not admitted; transports answer each
// with 503 and Retry-After before an upgrade, or 503 to an INVITE.
type RefusalCause string

// The causes of a refusal.
const (
	// RefusedFull: the call limit is reached.
	RefusedFull RefusalCause = "full"
	// RefusedDraining: the server is shutting down.
	RefusedDraining RefusalCause = "draining"
	// RefusedResource: a scarce resource the agent needs is exhausted
	// (ports, decoders).
	RefusedResource RefusalCause = "resource"
	// RefusedRateLimited: the source opened too many calls too fast.
	RefusedRateLimited RefusalCause = "rate_limited"
	// RefusedOverloaded: the node's measured load after one more call
	// would pass its ceiling (CPU per call times the calls).
	RefusedOverloaded RefusalCause = "overloaded"
)

// Refusal is why a call was not admitted and when to try again. Its
// Error and Detail are safe to show a client: no address, no key.
type Refusal struct {
	Cause RefusalCause
	// Detail says more ("20 calls"); may be empty.
	Detail string
	// RetryAfter is when a retry may succeed (> 0).
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	if r.Detail == "" {
		return fmt.Sprintf("%v: %s", ErrRefused, r.Cause)
	}
	return fmt.Sprintf("%v: %s (%s)", ErrRefused, r.Cause, r.Detail)
}

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (r *Refusal) Unwrap() error { return ErrRefused }

// RetryAfterSeconds is the Retry-After header's value: whole seconds,
// rounded up, at least 1.
func (r *Refusal) RetryAfterSeconds() int {
	s := int((r.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// RefusalOf returns the *Refusal in err's chain, or a RefusedFull one
// (retry after 1 s) for another error: a refusal is never untyped.
func RefusalOf(err error) *Refusal {
	if r, ok := errors.AsType[*Refusal](err); ok {
		return r
	}
	return &Refusal{Cause: RefusedFull, RetryAfter: time.Second}
}

// EndKind is how the server ends a served call; a transport maps it to
// its wire signal.
type EndKind uint8

// The ways a served call ends.
const (
	// EndNormal: the call is over (websocket 1000, a SIP BYE).
	EndNormal EndKind = iota
	// EndTryLater: the call was not started for capacity or a drain, or
	// is ended for one (websocket 1013, SIP 503 or a BYE).
	EndTryLater
	// EndInternal: the call could not be started or went on for an
	// internal error (websocket 1011).
	EndInternal
	// EndGoingAway: the server is shutting down (websocket 1001).
	EndGoingAway
)

// String names the kind in logs and metrics.
func (k EndKind) String() string {
	switch k {
	case EndNormal:
		return "normal"
	case EndTryLater:
		return "try_later"
	case EndInternal:
		return "internal"
	case EndGoingAway:
		return "going_away"
	}
	return "unknown"
}
