package twilio

import "errors"

// Sentinel errors of the package; they are wrapped with detail.
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("twilio: invalid config")
	// ErrBadJSON: a message is not the JSON of a Media Streams message.
	ErrBadJSON = errors.New("twilio: bad message")
	// ErrBadPayload: a media payload is not base64.
	ErrBadPayload = errors.New("twilio: bad media payload")
	// ErrRate: audio written at another rate than 8000 Hz.
	ErrRate = errors.New("twilio: audio rate is not 8000 Hz")
)
