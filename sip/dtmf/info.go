package dtmf

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// The SIP INFO content types that carry a key press.
const (
	// TypeDTMFRelay is Cisco's key=value format, the one most PBXs and
	// trunks send ("Signal=5\r\nDuration=160\r\n", Duration in ms).
	TypeDTMFRelay = "application/dtmf-relay"
	// TypeDTMF is a body of just the key.
	TypeDTMF = "application/dtmf"
)

// Bounds of the INFO parser.
const (
	// MaxInfoBody is the largest INFO body ParseInfo reads; a real one is
	// about 25 bytes.
	MaxInfoBody = 256
	// maxContentType bounds the Content-Type value.
	maxContentType = 128
	// maxInfoLines bounds the non-empty lines of a dtmf-relay body.
	maxInfoLines = 8
	// MaxInfoDuration bounds a dtmf-relay Duration: longer is malformed.
	MaxInfoDuration = 60 * time.Second
)

// ParseInfo reads a key press from a SIP INFO request: its Content-Type
// (parameters ignored, case-insensitive) and body, arrived at at (the
// press's At). The press has Source DTMFSIPInfo.
//
// application/dtmf-relay is lines of key=value, CRLF or LF ended, spaces
// and tabs allowed around key and value, keys case-insensitive: Signal is
// required, Duration (milliseconds, up to MaxInfoDuration) optional (0
// when absent), other keys are skipped; a repeated Signal or Duration, a
// line without '=', more than 8 lines, or a byte that is not printable
// ASCII is malformed. application/dtmf is the signal alone, surrounding
// white space allowed.
//
// The signal is what real PBXs send: a key 0-9 * # A-D (a-d too; Asterisk,
// FreeSWITCH, Cisco), or an RFC 4733 event code in decimal, 0-15 (some
// phones send Signal=10 for * and 11 for #, which Asterisk also accepts).
// A hook flash ("!" or 16, Asterisk's forms), any other single character
// and the codes 16-255 are well formed but no key: ErrUnknownKey.
//
// Errors: ErrUnsupportedType for another Content-Type, ErrBodyTooLarge
// over MaxInfoBody, ErrMalformedBody for a body off its grammar,
// ErrUnknownKey for a signal that is not a key. It allocates nothing on
// success.
func ParseInfo(contentType string, body []byte, at time.Time) (messages.DTMF, error) {
	if len(body) > MaxInfoBody {
		return messages.DTMF{}, fmt.Errorf("%w: %d bytes (at most %d)", ErrBodyTooLarge, len(body), MaxInfoBody)
	}
	relay, err := infoType(contentType)
	if err != nil {
		return messages.DTMF{}, err
	}
	for _, c := range body {
		if !(c >= ' ' && c <= '~') && c != '\t' && c != '\r' && c != '\n' {
			return messages.DTMF{}, fmt.Errorf("%w: byte %#02x", ErrMalformedBody, c)
		}
	}
	var press messages.DTMF
	if relay {
		press, err = parseRelay(body)
	} else {
		press.Digit, err = parseSignal(bytes.TrimSpace(body))
	}
	if err != nil {
		return messages.DTMF{}, err
	}
	press.Source = messages.DTMFSIPInfo
	press.At = at
	return press, nil
}

// infoType tells the two DTMF types apart (relay true for dtmf-relay).
func infoType(contentType string) (relay bool, err error) {
	if len(contentType) > maxContentType {
		return false, fmt.Errorf("%w: a content type of %d bytes", ErrUnsupportedType, len(contentType))
	}
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	switch {
	case strings.EqualFold(mt, TypeDTMFRelay):
		return true, nil
	case strings.EqualFold(mt, TypeDTMF):
		return false, nil
	}
	// The type is the caller's header: not echoed into the error.
	return false, fmt.Errorf("%w: not %s or %s", ErrUnsupportedType, TypeDTMFRelay, TypeDTMF)
}

// parseRelay parses an application/dtmf-relay body (checked printable).
func parseRelay(body []byte) (messages.DTMF, error) {
	var (
		press            messages.DTMF
		haveSig, haveDur bool
		sigErr           error
		lines            int
	)
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if bytes.IndexByte(line, '\r') >= 0 {
			return messages.DTMF{}, fmt.Errorf("%w: a bare CR", ErrMalformedBody)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if lines++; lines > maxInfoLines {
			return messages.DTMF{}, fmt.Errorf("%w: more than %d lines", ErrMalformedBody, maxInfoLines)
		}
		key, value, ok := bytes.Cut(line, []byte{'='})
		key, value = bytes.TrimSpace(key), bytes.TrimSpace(value)
		if !ok || !isToken(key) {
			return messages.DTMF{}, fmt.Errorf("%w: line %d is not key=value", ErrMalformedBody, lines)
		}
		switch {
		case bytes.EqualFold(key, []byte("signal")):
			if haveSig {
				return messages.DTMF{}, fmt.Errorf("%w: Signal twice", ErrMalformedBody)
			}
			haveSig = true
			// An unknown key is only reported once the whole body is known
			// to be well formed.
			press.Digit, sigErr = parseSignal(value)
			if sigErr != nil && !isUnknownKey(sigErr) {
				return messages.DTMF{}, sigErr
			}
		case bytes.EqualFold(key, []byte("duration")):
			if haveDur {
				return messages.DTMF{}, fmt.Errorf("%w: Duration twice", ErrMalformedBody)
			}
			haveDur = true
			ms, ok := parseMillis(value)
			if !ok {
				return messages.DTMF{}, fmt.Errorf("%w: Duration is not 0 to %d ms", ErrMalformedBody, MaxInfoDuration.Milliseconds())
			}
			press.Duration = time.Duration(ms) * time.Millisecond
		}
	}
	if !haveSig {
		return messages.DTMF{}, fmt.Errorf("%w: no Signal", ErrMalformedBody)
	}
	if sigErr != nil {
		return messages.DTMF{}, sigErr
	}
	return press, nil
}

// parseSignal reads a signal value: a key, "!" (flash), or a decimal event
// code 0-255.
func parseSignal(v []byte) (byte, error) {
	switch {
	case len(v) == 0:
		return 0, fmt.Errorf("%w: an empty signal", ErrMalformedBody)
	case len(v) == 1 && v[0] >= 'a' && v[0] <= 'd':
		return v[0] - 'a' + 'A', nil
	case len(v) == 1 && (v[0] < '0' || v[0] > '9'):
		if messages.ValidDTMFDigit(v[0]) {
			return v[0], nil
		}
		if v[0] == '!' {
			return 0, fmt.Errorf("%w: a hook flash", ErrUnknownKey) // Asterisk's form
		}
		// Any other single character is well formed too, and no key.
		return 0, fmt.Errorf("%w: a signal that is no key", ErrUnknownKey)
	}
	if len(v) > 3 {
		return 0, fmt.Errorf("%w: a signal of %d characters", ErrMalformedBody, len(v))
	}
	code := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: a signal that is no key", ErrMalformedBody)
		}
		code = code*10 + int(c-'0')
	}
	if code > 255 {
		return 0, fmt.Errorf("%w: event code %d", ErrMalformedBody, code)
	}
	key, ok := keyOfEvent(code)
	if !ok {
		return 0, fmt.Errorf("%w: event code %d", ErrUnknownKey, code)
	}
	return key, nil
}

// parseMillis reads a decimal count of milliseconds up to MaxInfoDuration.
func parseMillis(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 6 {
		return 0, false
	}
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		ms = ms*10 + int64(c-'0')
	}
	return ms, ms <= MaxInfoDuration.Milliseconds()
}

// isToken reports whether k is a non-empty key of letters, digits, '-' and
// '_'.
func isToken(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
