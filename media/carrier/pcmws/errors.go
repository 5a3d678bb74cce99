package pcmws

import "errors"

// Sentinel errors of the package; they are wrapped with detail.
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("pcmws: invalid config")
	// ErrBadRate: the rate query parameter is not one of 8000, 16000,
	// 24000, 48000.
	ErrBadRate = errors.New("pcmws: unsupported rate")
	// ErrBadControl: a text message is not a JSON control object.
	ErrBadControl = errors.New("pcmws: bad control message")
	// ErrUnknownControl: a control message of a type we do not know.
	ErrUnknownControl = errors.New("pcmws: unknown control message")
	// ErrRate: audio written at another rate than the call's.
	ErrRate = errors.New("pcmws: audio rate differs from the call's")
	// ErrPublish: an event that does not encode as JSON.
	ErrPublish = errors.New("pcmws: event does not encode")
)

// The client's mistakes, as the error message ({"type":"error"}) tells
// them: they quote nothing of the message. ParseControl wraps one of
// them in ErrBadControl or ErrUnknownControl; the call reader the others.
var (
	errNotJSON    = errors.New("invalid JSON: a text message is one JSON object")
	errNoType     = errors.New(`a control message needs a string "type"`)
	errNoName     = errors.New(`a mark needs a string "name"`)
	errUnknown    = errors.New(`unknown type: the controls are "mark" and "hangup"`)
	errOddLength  = errors.New("odd-length audio: a binary message is 16-bit samples, an even number of bytes")
	errOversized  = errors.New("message too large: it was skipped")
	errUnexpected = errors.New("bad message")
)
