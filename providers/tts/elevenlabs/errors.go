package elevenlabs

import "errors"

// Sentinel errors of the adapter. Failures of a session are the typed
// errors of package providers instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("elevenlabs: invalid config")
	// ErrMissingKey: the environment variable Config.APIKeyEnv names is
	// unset or empty. The error names the variable, never a value.
	ErrMissingKey = errors.New("elevenlabs: API key variable is empty")
	// ErrTooManyContexts: Push would open more contexts than the service
	// allows on one socket (Config.MaxContexts, 5); a cancelled context
	// holds its slot until the service has finished it. Nothing was sent,
	// the session goes on.
	ErrTooManyContexts = errors.New("elevenlabs: too many open contexts")
	// ErrContextFlushed: Push or Flush on a context whose Flush is still
	// being spoken; after its Flushed event the id opens a new context.
	ErrContextFlushed = errors.New("elevenlabs: context already flushed")
	// ErrEmptyContextID: a Push, Flush or Cancel without a context id.
	ErrEmptyContextID = errors.New("elevenlabs: empty context id")
	// ErrQueueFull: the send queue was full (the network is slower than
	// the text); the message was not sent, the session goes on. After a
	// Cancel the context is still cancelled locally.
	ErrQueueFull = errors.New("elevenlabs: send queue full, message dropped")
)
