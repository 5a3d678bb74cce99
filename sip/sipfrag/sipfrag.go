package sipfrag

import (
	"bytes"
	"fmt"
)

// MaxLine bounds the status line, its line break excluded.
const MaxLine = 256

// Status is the status line of a sipfrag.
type Status struct {
	// Code is the status code, 100 to 699.
	Code int
	// Reason is the reason phrase ("" when none), printable ASCII or
	// UTF-8 without control characters.
	Reason string
}

// Final reports a final status (200 and above).
func (s Status) Final() bool { return s.Code >= 200 }

// Success reports a 2xx status.
func (s Status) Success() bool { return s.Code >= 200 && s.Code < 300 }

// Parse reads the status line at the start of a message/sipfrag body:
// "SIP/2.0" SP 3DIGIT SP Reason-Phrase, ended by CRLF, LF or the end of
// the body. Leading blank lines are not allowed (RFC 3420 keeps the
// start line first).
func Parse(body []byte) (Status, error) {
	line := body
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		line = body[:i]
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > MaxLine {
		return Status{}, fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLong, len(line), MaxLine)
	}
	const version = "SIP/2.0 "
	if len(line) < len(version)+3 || !bytes.EqualFold(line[:len(version)], []byte(version)) {
		return Status{}, fmt.Errorf("%w: no SIP/2.0 version", ErrMalformed)
	}
	rest := line[len(version):]
	code := 0
	for _, c := range rest[:3] {
		if c < '0' || c > '9' {
			return Status{}, fmt.Errorf("%w: the code is not three digits", ErrMalformed)
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 || code > 699 {
		return Status{}, fmt.Errorf("%w: code %d out of 100..699", ErrMalformed, code)
	}
	rest = rest[3:]
	if len(rest) > 0 {
		if rest[0] != ' ' {
			return Status{}, fmt.Errorf("%w: no space after the code", ErrMalformed)
		}
		rest = rest[1:]
	}
	for _, c := range rest {
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return Status{}, fmt.Errorf("%w: a control character in the reason", ErrMalformed)
		}
	}
	return Status{Code: code, Reason: string(rest)}, nil
}
