package wsmock

import "errors"

// ErrListenerClosed: Accept or DialContext on a closed PipeListener.
var ErrListenerClosed = errors.New("wsmock: listener closed")

// ErrConnClosed: the session ended (the client went away, the fault
// dropped it, or the server is closing).
var ErrConnClosed = errors.New("wsmock: connection closed")
