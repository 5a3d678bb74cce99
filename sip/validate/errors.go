package validate

import "errors"

// Sentinel errors of the package; they are wrapped with detail.
var (
	// ErrInvalidOptions marks Options that Validate refuses.
	ErrInvalidOptions = errors.New("validate: invalid options")
	// ErrRefused is what a Refusal with a response code unwraps to: the
	// request is answered with that code and no handler sees it.
	ErrRefused = errors.New("validate: request refused")
	// ErrDropped is what a Refusal with Code 0 unwraps to: the request is
	// too broken (or too big) to answer and is dropped, counted.
	ErrDropped = errors.New("validate: request dropped")
)
