package dtmf

import "errors"

// The sentinel errors of the package. Every error it returns wraps one of
// them, so the SIP layer picks its answer with errors.Is.
var (
	// ErrInvalidConfig is wrapped by every Config.Validate error.
	ErrInvalidConfig = errors.New("dtmf: invalid config")
	// ErrMalformedPayload: an RTP telephone-event payload is not a whole
	// number of 4-byte event blocks (or is empty). The packet is dropped
	// and counted (Stats.Malformed).
	ErrMalformedPayload = errors.New("dtmf: malformed telephone-event payload")
	// ErrMalformedBody: a SIP INFO body of a DTMF type does not follow its
	// grammar (no Signal, a line without '=', a repeated key, a bad
	// Duration, stray bytes). The SIP layer answers 400.
	ErrMalformedBody = errors.New("dtmf: malformed info body")
	// ErrBodyTooLarge: a SIP INFO body is longer than MaxInfoBody. The SIP
	// layer answers 413 (or 400).
	ErrBodyTooLarge = errors.New("dtmf: info body too large")
	// ErrUnknownKey: a well-formed INFO body signals something that is not
	// a DTMF key (a hook flash, an event code above 15). The SIP layer
	// answers 200 and drops it, or 400; it is not a press either way.
	ErrUnknownKey = errors.New("dtmf: not a dtmf key")
	// ErrUnsupportedType: the INFO's Content-Type is neither
	// application/dtmf-relay nor application/dtmf. The SIP layer answers
	// 415.
	ErrUnsupportedType = errors.New("dtmf: unsupported info content type")
)

// isUnknownKey reports whether err is (wraps) ErrUnknownKey.
func isUnknownKey(err error) bool { return errors.Is(err, ErrUnknownKey) }

// ErrInvalidDigits: digits to send are empty, too many, or not keys
// (0-9 * # A-D).
var ErrInvalidDigits = errors.New("dtmf: invalid digits to send")
