package session

import "errors"

// Errors of the session.
var (
	// ErrInvalidConfig marks a bad Config, or an operator's request the
	// session cannot carry out (an unknown stage, a call that is ending).
	ErrInvalidConfig = errors.New("session: invalid config")
	// ErrRestartLimit: an operator restarted a stage more often than its
	// supervision allows (Supervision.MaxRestarts within Window); the
	// session gave up on the stage, as after that many failures, and the
	// call ends.
	ErrRestartLimit = errors.New("session: restart limit reached")
)
