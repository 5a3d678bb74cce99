package aura

import "errors"

// Sentinel errors of the adapter. Failures of a session are the typed
// errors of package providers instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("aura: invalid config")
	// ErrMissingKey: the environment variable Config.APIKeyEnv names is
	// unset or empty. The error names the variable, never a value.
	ErrMissingKey = errors.New("aura: API key variable is empty")
	// ErrContextClosed: Push to a context after its Flush (before its
	// Flushed). A context id may be used again once its Flushed or
	// Cancelled was queued: it then opens a new context.
	ErrContextClosed = errors.New("aura: context is flushing")
	// ErrTextDropped: the send queue or the session's hold of waiting
	// contexts was full; the text (or flush) was not taken and the
	// context is unchanged. The session goes on.
	ErrTextDropped = errors.New("aura: text dropped, queue full")
	// ErrEmptyContextID: a context id must not be empty.
	ErrEmptyContextID = errors.New("aura: empty context id")
)
