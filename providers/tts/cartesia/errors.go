package cartesia

import "errors"

// Sentinel errors of the adapter. Failures of a session are the typed
// errors of package providers instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("cartesia: invalid config")
	// ErrMissingKey: the environment variable Config.APIKeyEnv names is
	// unset or empty. The error names the variable, never a value.
	ErrMissingKey = errors.New("cartesia: API key variable is empty")
	// ErrContextClosed: Push to a context that is being flushed (its
	// Flushed has not come yet). A context id may be used again once its
	// Flushed or Cancelled was queued: it then opens a new context.
	ErrContextClosed = errors.New("cartesia: context is flushing")
	// ErrTextDropped: the send queue was full; the text (or the flush) was
	// not sent and the context is unchanged. The session goes on.
	ErrTextDropped = errors.New("cartesia: message dropped, send queue full")
)
