package opclient

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the operator client. Each is wrapped with its detail:
// errors.Is tells them apart.
var (
	// ErrInvalidConfig: the Config cannot make a client (an address that
	// is not an http(s) URL, a token shorter than MinToken).
	ErrInvalidConfig = errors.New("opclient: invalid config")
	// ErrUnauthorized: the server refused the token (401).
	ErrUnauthorized = errors.New("opclient: the operator token was refused")
	// ErrUnknownCall: no live call has this id (404 on a call).
	ErrUnknownCall = errors.New("opclient: unknown call")
	// ErrUnknownNode: no node of the deployment has this name (404 on a
	// node).
	ErrUnknownNode = errors.New("opclient: unknown node")
	// ErrUnknownStage: a restart named no stage of a call (400); the
	// error is a *StageError with the valid stages.
	ErrUnknownStage = errors.New("opclient: unknown stage")
	// ErrRefused: the node refused the request in its state (409: a
	// restart of an ending call, an undrain while it shuts down).
	ErrRefused = errors.New("opclient: refused")
	// ErrNoAnswer: the server was reached but the call or the node that
	// holds it did not answer in time (502, 503, 504).
	ErrNoAnswer = errors.New("opclient: no answer from the call or its node")
	// ErrUnreachable: the server could not be reached, or the connection
	// broke or timed out before its answer.
	ErrUnreachable = errors.New("opclient: the operator API is unreachable")
	// ErrProtocol: an answer that is not the operator API's (not JSON,
	// an unexpected status, a malformed event, a server without the
	// operator API).
	ErrProtocol = errors.New("opclient: not an operator API answer")
)

// StageError is ErrUnknownStage with what the server said: the stage
// asked for and the stages a restart may name.
type StageError struct {
	Stage  string
	Stages []string
}

func (e *StageError) Error() string {
	if len(e.Stages) == 0 {
		return fmt.Sprintf("%v: %q", ErrUnknownStage, e.Stage)
	}
	return fmt.Sprintf("%v: %q (want one of %s)", ErrUnknownStage, e.Stage, strings.Join(e.Stages, ", "))
}

// Unwrap makes errors.Is(err, ErrUnknownStage) true.
func (e *StageError) Unwrap() error { return ErrUnknownStage }
