package openaispeech

import "errors"

// Sentinels of the adapter's own errors; failures of the service are the
// typed errors of package providers (Rejected, Timeout, Disconnected,
// Protocol).
var (
	// ErrInvalidConfig: Config.Validate refused the config.
	ErrInvalidConfig = errors.New("openaispeech: invalid config")
	// ErrMissingKey: the environment variable named by Config.APIKeyEnv
	// is unset or empty.
	ErrMissingKey = errors.New("openaispeech: API key missing")
	// ErrEmptyContextID: a context id must not be empty.
	ErrEmptyContextID = errors.New("openaispeech: empty context id")
	// ErrContextClosed: the context was flushed or cancelled and takes
	// no more text.
	ErrContextClosed = errors.New("openaispeech: context closed")
	// ErrTooManyContexts: the session holds Config.MaxOpenContexts
	// contexts not yet spoken.
	ErrTooManyContexts = errors.New("openaispeech: too many open contexts")
	// ErrTextTooLong: the context's queued text would exceed
	// Config.MaxQueuedBytes.
	ErrTextTooLong = errors.New("openaispeech: too much queued text")
	// ErrCancelBacklog: too many cancels wait for their Cancelled event
	// (the caller does not read Events).
	ErrCancelBacklog = errors.New("openaispeech: too many cancels waiting for their ack")
)
