package pipetest

import (
	"fmt"
	"net"
)

// ErrListenerClosed is what a Listener's Accept and DialContext return
// once it is closed; it wraps net.ErrClosed (so an http.Server treats it as
// the end of Serve).
var ErrListenerClosed = fmt.Errorf("pipenet: listener closed: %w", net.ErrClosed)
