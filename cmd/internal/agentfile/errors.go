package agentfile

import "errors"

// ErrInvalid is wrapped by Diagnostics.Err: the file has at least one
// problem.
var ErrInvalid = errors.New("agentfile: invalid agent file")

// ErrSize is wrapped by ParseSize: the text is not a size.
var ErrSize = errors.New("agentfile: not a size")

// ErrMissingVariable is wrapped by Expand: a placeholder names a
// variable the call does not have (the error names it, never a value).
var ErrMissingVariable = errors.New("agentfile: missing variable")

// ErrPlaceholder is wrapped by Expand: the text has a malformed
// placeholder ("{{" not closed, an empty or bad name).
var ErrPlaceholder = errors.New("agentfile: bad placeholder")
