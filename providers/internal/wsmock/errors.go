package wsmock

import (
	"errors"

	"github.com/brisvox/brisvox/internal/pipenet"
)

// ErrListenerClosed: Accept or DialContext on a closed PipeListener
// (pipenet.ErrListenerClosed).
var ErrListenerClosed = pipenet.ErrListenerClosed

// ErrConnClosed: the session ended (the client went away, the fault
// dropped it, or the server is closing).
var ErrConnClosed = errors.New("wsmock: connection closed")
