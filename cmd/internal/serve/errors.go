package serve

import "errors"

// Errors of the server.
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("serve: invalid config")
	// ErrDraining: the server is shutting down, or drained by an
	// operator, and admits no call.
	ErrDraining = errors.New("serve: draining, not admitting calls")
	// ErrUnknownNode: no node of the operator API has this name.
	ErrUnknownNode = errors.New("serve: unknown node")
	// ErrUnknownStage: a restart names no stage of a call.
	ErrUnknownStage = errors.New("serve: unknown stage")
	// ErrNodeUnreachable: another node of the fleet did not answer.
	ErrNodeUnreachable = errors.New("serve: node unreachable")
	// ErrRefused: an operator's request the node refuses in its state
	// (an undrain while it shuts down).
	ErrRefused = errors.New("serve: refused")
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
