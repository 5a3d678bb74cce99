package sipfrag

import "errors"

var (
	// ErrMalformed: the body does not start with a SIP status line.
	ErrMalformed = errors.New("sipfrag: not a SIP status line")
	// ErrTooLong: the first line is longer than MaxLine.
	ErrTooLong = errors.New("sipfrag: status line too long")
)
