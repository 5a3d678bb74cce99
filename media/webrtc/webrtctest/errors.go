package webrtctest

import "errors"

// The sentinel errors of the package.
var (
	// ErrSignaling: the server refused the offer or sent an answer that
	// does not parse; the error says the HTTP status and the reason.
	ErrSignaling = errors.New("webrtctest: signaling failed")
	// ErrClosed: the caller was closed.
	ErrClosed = errors.New("webrtctest: caller closed")
	// ErrRate: Play got a rate the resampler does not support.
	ErrRate = errors.New("webrtctest: unsupported rate")
)
