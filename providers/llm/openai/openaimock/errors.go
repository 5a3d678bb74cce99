package openaimock

import (
	"fmt"
	"net"
)

// ErrListenerClosed is what a PipeListener's Accept and DialContext return
// once it is closed; it matches net.ErrClosed, as http.Server expects.
var ErrListenerClosed = fmt.Errorf("openaimock: pipe listener: %w", net.ErrClosed)
