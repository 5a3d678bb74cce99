package transport

import "errors"

// ErrClosed is returned by a Conn whose call is over (the caller hung up).
var ErrClosed = errors.New("transport: connection closed")
