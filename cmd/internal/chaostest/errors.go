package chaostest

import "errors"

var (
	// ErrInvalidConfig marks a Config that Validate refused.
	ErrInvalidConfig = errors.New("chaostest: invalid config")
	// ErrViolation marks a broken invariant of a call (see the checkers
	// in check.go).
	ErrViolation = errors.New("chaostest: invariant violated")
	// ErrRun marks a run that could not be carried out (the server did
	// not start, a caller could not connect).
	ErrRun = errors.New("chaostest: run failed")
)
