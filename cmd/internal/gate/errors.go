package gate

import "errors"

// Sentinel errors of the package; they are wrapped with detail.
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("gate: invalid config")
	// ErrUnauthorized: the request carries no credential (401).
	ErrUnauthorized = errors.New("gate: no credentials")
	// ErrForbidden: the credential is wrong: a token that does not
	// match, a signature that does not verify or is malformed, a URL
	// signed beyond the max TTL (403).
	ErrForbidden = errors.New("gate: wrong credentials")
	// ErrExpired: a signed URL whose exp has passed (403).
	ErrExpired = errors.New("gate: signed URL expired")
)
