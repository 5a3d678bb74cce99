package brisvoxsim

import "errors"

var (
	// ErrUsage: the arguments are not a command this binary knows (the
	// usage has been printed). The exit status is 2.
	ErrUsage = errors.New("brisvox-sim: bad usage")
	// ErrFailed: a scenario failed, the demo's checks failed, or the
	// report could not be written. The exit status is 1.
	ErrFailed = errors.New("brisvox-sim: failed")
)

// ExitCode is the exit status for the error a command ended with: 0 for
// nil, 2 for ErrUsage, 1 for anything else.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	default:
		return 1
	}
}
