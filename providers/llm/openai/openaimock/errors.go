package openaimock

import (
	"github.com/brisvox/brisvox/internal/pipenet"
)

// ErrListenerClosed is what a PipeListener's Accept and DialContext return
// once it is closed (pipenet.ErrListenerClosed; it wraps net.ErrClosed).
var ErrListenerClosed = pipenet.ErrListenerClosed
