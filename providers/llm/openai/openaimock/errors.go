package openaimock

import (
	"github.com/brisvox/brisvox/internal/pipetest"
)

// ErrListenerClosed is what a PipeListener's Accept and DialContext return
// once it is closed (pipetest.ErrListenerClosed; it wraps net.ErrClosed).
var ErrListenerClosed = pipetest.ErrListenerClosed
