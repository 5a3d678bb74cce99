package openaimock

import "github.com/brisvox/brisvox/internal/pipetest"

// PipeAddr is the address of every PipeListener; the host of its URL.
const PipeAddr = pipetest.Addr

// PipeListener is the in-memory listener of package pipenet: DialContext
// makes a net.Pipe pair, hands the server end to Accept and returns the
// client end, so the mock works inside a testing/synctest bubble. Give its
// DialContext to the client and the listener to NewWithListener.
type PipeListener = pipetest.Listener

// NewPipeListener makes an open listener.
func NewPipeListener() *PipeListener { return pipetest.New() }
