package wsmock

import (
	"errors"

	"github.com/brisvox/brisvox/internal/pipetest"
)

// ErrListenerClosed: Accept or DialContext on a closed PipeListener
// (pipetest.ErrListenerClosed).
var ErrListenerClosed = pipetest.ErrListenerClosed

// ErrConnClosed: the session ended (the client went away, the fault
// dropped it, or the server is closing).
var ErrConnClosed = errors.New("wsmock: connection closed")
