package records

import "errors"

var (
	// ErrNotFound: no record of that call (or it was erased).
	ErrNotFound = errors.New("records: no such call record")
	// ErrInvalidConfig: a records setting is wrong; the message says which.
	ErrInvalidConfig = errors.New("records: invalid config")
	// ErrInvalidQuery: a list or export filter is wrong.
	ErrInvalidQuery = errors.New("records: invalid query")
	// ErrClosed: the store or service was closed.
	ErrClosed = errors.New("records: closed")
	// ErrUnavailable: the database cannot be reached now (a Put is kept
	// in the journal and retried).
	ErrUnavailable = errors.New("records: database unavailable")
)
