package recording

import "errors"

var (
	// ErrInvalidConfig: a recording setting is wrong; the message says which.
	ErrInvalidConfig = errors.New("recording: invalid config")
	// ErrInvalidCall: Begin was given an id or rates it cannot record.
	ErrInvalidCall = errors.New("recording: cannot record this call")
	// ErrExists: the call is being recorded already, or its file exists.
	ErrExists = errors.New("recording: the call has a recording already")
	// ErrNoCall: no live recording of that call (it ended, or was never
	// recorded).
	ErrNoCall = errors.New("recording: no live recording of that call")
	// ErrInvalidKey: a recording key that is not a recording's name under
	// the recordings directory.
	ErrInvalidKey = errors.New("recording: invalid recording key")
	// ErrClosed: the recorder was closed.
	ErrClosed = errors.New("recording: recorder closed")
)
