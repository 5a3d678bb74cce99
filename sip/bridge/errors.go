package bridge

import "errors"

// The sentinel errors of the package.
var (
	// ErrInvalidConfig: a nil session, the same session twice, or a
	// session not started.
	ErrInvalidConfig = errors.New("bridge: invalid config")
	// ErrCodecMismatch: the legs speak different codecs; relaying needs
	// the same one (transcoding is not implemented).
	ErrCodecMismatch = errors.New("bridge: the legs' codecs differ")
	// ErrState: Start twice, or after Stop.
	ErrState = errors.New("bridge: wrong state")
)
