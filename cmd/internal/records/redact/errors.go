package redact

import "errors"

var (
	// ErrInvalidConfig: a redaction setting is wrong (an unknown kind, a
	// pattern without a name or whose expression does not compile); the
	// message names the kind or the pattern.
	ErrInvalidConfig = errors.New("redact: invalid config")
	// ErrMalformedJSON: JSON given to Redactor.JSON does not parse; the
	// caller drops the field rather than store it unredacted.
	ErrMalformedJSON = errors.New("redact: malformed JSON")
)
