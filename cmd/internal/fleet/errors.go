package fleet

import "errors"

// Errors of the fleet. The commands return serve's errors (ErrUnknownCall,
// ErrUnknownNode, ErrUnknownStage, ErrRefused, ErrNodeUnreachable); these
// are the fleet's own.
var (
	// ErrInvalidConfig marks a bad Config or option.
	ErrInvalidConfig = errors.New("fleet: invalid config")
	// ErrStart: the node could not join the cluster (its remote port, its
	// membership provider).
	ErrStart = errors.New("fleet: cannot join the cluster")
	// ErrRemote: another node answered that it could not carry out a
	// command (its call did not answer in time, it was busy).
	ErrRemote = errors.New("fleet: the node could not carry out the command")
	// ErrState: Start or Stop out of order (Start twice, Start after Stop).
	ErrState = errors.New("fleet: not in a state to do that")
)
