package serve

import "errors"

// Errors of the server.
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("serve: invalid config")
	// ErrDraining: the server is shutting down and admits no call.
	ErrDraining = errors.New("serve: shutting down, not admitting calls")
	// ErrUnknownCall: no live call has this id.
	ErrUnknownCall = errors.New("serve: unknown call")
	// ErrBadDial: an operator's dial request that cannot be placed.
	ErrBadDial = errors.New("serve: bad dial request")
	// ErrDialFailed: an outbound call that was not answered or not
	// started (a *DialError says why).
	ErrDialFailed = errors.New("serve: outbound call failed")
	// ErrNotStarted: an answered call whose session could not start
	// (StartDialed).
	ErrNotStarted = errors.New("serve: the call was not started")
)
