package gemini

import "errors"

// Sentinel errors of the adapter. Failures of a request or a stream are the
// typed errors of package providers (Rejected, Timeout, Disconnected,
// Protocol) instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("gemini: invalid config")
	// ErrMissingKey: Config.APIKeyEnv names an environment variable that
	// is unset or empty. The error names the variable, never a value.
	ErrMissingKey = errors.New("gemini: API key variable is empty")
	// ErrNilRequest: Stream was given no request.
	ErrNilRequest = errors.New("gemini: nil request")
	// ErrInvalidRequest: a request that cannot be encoded (a tool's
	// parameter schema that is not JSON, provider data that is not the
	// adapter's, a conversation with no user turn).
	ErrInvalidRequest = errors.New("gemini: invalid request")
)
