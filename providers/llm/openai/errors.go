package openai

import "errors"

// Sentinel errors of the adapter. Failures of a request or a stream are the
// typed errors of package providers (Rejected, Timeout, Disconnected,
// Protocol) instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("openai: invalid config")
	// ErrMissingKey: Config.APIKeyEnv names an environment variable that
	// is unset or empty. The error names the variable, never a value.
	ErrMissingKey = errors.New("openai: API key variable is empty")
)

// ErrNilRequest: Stream was given no request.
var ErrNilRequest = errors.New("openai: nil request")

// ErrInvalidRequest: a request that cannot be encoded (a tool's parameter
// schema that is not JSON, say).
var ErrInvalidRequest = errors.New("openai: invalid request")
