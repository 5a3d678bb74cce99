package rules

import "errors"

// Sentinel errors of the package; errors wrap them as
// fmt.Errorf("%w: detail", ErrX).
var (
	// ErrInvalidConfig: a Config field is out of its range.
	ErrInvalidConfig = errors.New("rules: invalid config")
	// ErrInvalidRequest: Stream was given a nil request.
	ErrInvalidRequest = errors.New("rules: invalid request")
)
