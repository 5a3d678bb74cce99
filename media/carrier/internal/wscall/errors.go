package wscall

import "errors"

// Sentinel errors of the call machinery; callers wrap them with detail.
var (
	// ErrQueueFull: the outbox is full (the peer does not read).
	ErrQueueFull = errors.New("wscall: outbound queue full")
	// ErrOversized: an inbound message was longer than the bound.
	ErrOversized = errors.New("wscall: message too large")
	// ErrShuttingDown: the handler no longer takes calls.
	ErrShuttingDown = errors.New("wscall: shutting down")
	// ErrStale: audio of an epoch that a clear already dropped.
	ErrStale = errors.New("wscall: stale epoch")
)
