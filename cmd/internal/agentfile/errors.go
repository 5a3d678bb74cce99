package agentfile

import "errors"

// ErrInvalid is wrapped by Diagnostics.Err: the file has at least one
// problem.
var ErrInvalid = errors.New("agentfile: invalid agent file")

// ErrSize is wrapped by ParseSize: the text is not a size.
var ErrSize = errors.New("agentfile: not a size")
