package ttfttest

import "errors"

// Sentinel errors of the measurements, wrapped as fmt.Errorf("%w: detail",
// ErrX).
var (
	// ErrNoText: the stream or body ended before the first text.
	ErrNoText = errors.New("ttft: no text before the end")
	// ErrStatus: the bare request got a non-2xx status.
	ErrStatus = errors.New("ttft: bad status")
)
