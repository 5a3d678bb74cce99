package jsonlex

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every error SyntaxError makes: the data is not
// JSON, or not of the shape the reader asked for. The detail names an
// offset and what was expected, never the data itself.
var ErrSyntax = errors.New("invalid JSON")

// SyntaxError is the error for data that went wrong at offset where
// expected (a Fault's Expected, or a reader's own word for its grammar:
// "a member name", "':'") should have been.
func SyntaxError(offset int, expected string) error {
	return fmt.Errorf("%w: at offset %d: expected %s", ErrSyntax, offset, expected)
}

// Fault is what the grammar expected where a scan stopped; NoFault when it
// did not stop on an error.
type Fault uint8

// The faults, in the order a scan meets them.
const (
	NoFault Fault = iota
	// FaultNumber: a number does not start with a digit (after its '-').
	FaultNumber
	// FaultFraction: no digit after a number's '.'.
	FaultFraction
	// FaultExponent: no digit in a number's exponent.
	FaultExponent
	// FaultControl: a raw control byte (below 0x20) inside a string.
	FaultControl
	// FaultEscapeEnd: the data ends just after a backslash.
	FaultEscapeEnd
	// FaultHex: \u is not followed by four hex digits.
	FaultHex
	// FaultEscape: a backslash followed by a byte that starts no escape.
	FaultEscape
	// FaultStringEnd: the data ends inside a string.
	FaultStringEnd
	// FaultUTF8: raw invalid UTF-8 inside a string, which ScanString
	// refuses (encoding/json reads it as U+FFFD; the others do too).
	FaultUTF8
)

// Expected words the fault as what was expected, for an error message.
func (f Fault) Expected() string {
	switch f {
	case NoFault:
		return "nothing (no fault)"
	case FaultNumber:
		return "a number"
	case FaultFraction:
		return "a digit after '.'"
	case FaultExponent:
		return "a digit in the exponent"
	case FaultControl:
		return "no control character in a string"
	case FaultEscapeEnd:
		return "an escape"
	case FaultHex:
		return "four hex digits after \\u"
	case FaultEscape:
		return "a valid escape"
	case FaultStringEnd:
		return "the end of a string"
	case FaultUTF8:
		return "valid UTF-8 in a string"
	default:
		return fmt.Sprintf("fault %d", uint8(f))
	}
}
