package wsconn

import "errors"

// Sentinel errors of the package. Failures of a connection are the typed
// errors of package providers instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("wsconn: invalid config")
	// ErrQueueFull: Send found the outbound queue full; the frame was not
	// queued (and was counted as dropped), the session goes on.
	ErrQueueFull = errors.New("wsconn: send queue full")
)
