package pacer

import "errors"

// Sentinel errors of the package; errors returned here wrap them, as
// fmt.Errorf("%w: detail", ErrX).
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("pacer: invalid config")
)
