package tracing

import "errors"

var (
	// ErrInvalidConfig: a tracing setting is wrong; the message says
	// which and what to do.
	ErrInvalidConfig = errors.New("tracing: invalid config")
	// ErrClosed: the tracer was closed already.
	ErrClosed = errors.New("tracing: closed")
)
