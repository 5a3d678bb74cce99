package providers

import (
	"errors"
	"fmt"
)

// Sentinels that every typed provider error wraps, so callers can test the
// kind with errors.Is.
var (
	// ErrRejected: the service refused the request (an HTTP or close status).
	ErrRejected = errors.New("provider rejected the request")
	// ErrTimeout: the service did not answer within the deadline.
	ErrTimeout = errors.New("provider timed out")
	// ErrDisconnected: the connection dropped mid-session.
	ErrDisconnected = errors.New("provider disconnected")
	// ErrProtocol: the service sent something the adapter cannot read.
	ErrProtocol = errors.New("provider protocol violation")
	// ErrClosed: the session was used after Close.
	ErrClosed = errors.New("provider session closed")
	// ErrOption: a value an option table refuses, or a setter given
	// another vendor's config.
	ErrOption = errors.New("provider option refused")
)

// Rejected is a refusal with the service's status (401, 429, 503, ...).
type Rejected struct {
	Status int
	Detail string
}

func (e *Rejected) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%v: status %d", ErrRejected, e.Status)
	}
	return fmt.Sprintf("%v: status %d: %s", ErrRejected, e.Status, e.Detail)
}

// Unwrap makes errors.Is(err, ErrRejected) hold.
func (e *Rejected) Unwrap() error { return ErrRejected }

// Retryable tells whether the same request may succeed later: rate limits
// and server errors may, authentication and bad requests may not.
func (e *Rejected) Retryable() bool { return e.Status == 408 || e.Status == 429 || e.Status >= 500 }

// Timeout is a deadline that passed; Op names what was waited for.
type Timeout struct{ Op string }

func (e *Timeout) Error() string { return fmt.Sprintf("%v: %s", ErrTimeout, e.Op) }

// Unwrap makes errors.Is(err, ErrTimeout) hold.
func (e *Timeout) Unwrap() error { return ErrTimeout }

// Retryable is true: a new session may be faster.
func (e *Timeout) Retryable() bool { return true }

// Disconnected is a connection lost mid-session.
type Disconnected struct{ Cause error }

func (e *Disconnected) Error() string {
	if e.Cause == nil {
		return ErrDisconnected.Error()
	}
	return fmt.Sprintf("%v: %v", ErrDisconnected, e.Cause)
}

// Unwrap returns both the sentinel and the cause.
func (e *Disconnected) Unwrap() []error { return []error{ErrDisconnected, e.Cause} }

// Retryable is true: a reconnect may help.
func (e *Disconnected) Retryable() bool { return true }

// Protocol is a message the adapter could not understand.
type Protocol struct{ Detail string }

func (e *Protocol) Error() string { return fmt.Sprintf("%v: %s", ErrProtocol, e.Detail) }

// Unwrap makes errors.Is(err, ErrProtocol) hold.
func (e *Protocol) Unwrap() error { return ErrProtocol }

// Retryable is false: the same exchange would fail the same way.
func (e *Protocol) Retryable() bool { return false }

// The kinds KindOf names.
const (
	KindRejected     = "rejected"
	KindTimeout      = "timeout"
	KindDisconnected = "disconnected"
	KindProtocol     = "protocol"
	KindClosed       = "closed"
	KindOther        = "other"
)

// KindOf names the kind of a provider error, through any wrapping:
// rejected, timeout, disconnected, protocol, closed, or other for an error
// that is none of them (metrics label failures with it).
func KindOf(err error) string {
	switch {
	case errors.Is(err, ErrRejected):
		return KindRejected
	case errors.Is(err, ErrTimeout):
		return KindTimeout
	case errors.Is(err, ErrDisconnected):
		return KindDisconnected
	case errors.Is(err, ErrProtocol):
		return KindProtocol
	case errors.Is(err, ErrClosed):
		return KindClosed
	}
	return KindOther
}

// Retryable tells whether err is a provider error that a retry or reconnect
// may cure. Unknown errors are not retryable.
func Retryable(err error) bool {
	var r interface{ Retryable() bool }
	if errors.As(err, &r) {
		return r.Retryable()
	}
	return false
}
