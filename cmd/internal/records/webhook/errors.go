package webhook

import "errors"

var (
	// ErrInvalidConfig: a webhook setting is wrong; the message says
	// which (never the secret).
	ErrInvalidConfig = errors.New("webhook: invalid config")
	// ErrClosed: Deliver after Close.
	ErrClosed = errors.New("webhook: closed")
	// ErrMalformedSignature: the Brisvox-Signature header is missing or
	// does not read as t=<unix seconds>,v1=<64 hex digits>.
	ErrMalformedSignature = errors.New("webhook: malformed signature header")
	// ErrBadSignature: no v1 of the header is the HMAC of the timestamp
	// and the body with the secret (a forgery, a changed body or another
	// secret).
	ErrBadSignature = errors.New("webhook: signature does not match")
	// ErrExpired: the signature is right but its timestamp is outside
	// the tolerance: a replay of an old request (or a clock far off).
	ErrExpired = errors.New("webhook: signature timestamp outside tolerance")
)
