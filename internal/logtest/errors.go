package logtest

import "errors"

// Errors of Check.
var (
	// ErrNotJSON: a line is not one JSON object.
	ErrNotJSON = errors.New("logcheck: not a JSON object")
	// ErrDuplicateKey: an object has a key twice.
	ErrDuplicateKey = errors.New("logcheck: duplicate key")
)
