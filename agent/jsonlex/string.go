package jsonlex

import (
	"unicode/utf16"
	"unicode/utf8"
)

// The string grammar: a quote, then characters up to the closing quote;
// no raw control byte (below 0x20); a backslash starts one of the escapes
// \" \\ \/ \b \f \n \r \t \uXXXX. An escaped surrogate that is not half of
// a valid pair decodes to one U+FFFD, and raw invalid UTF-8 does too, as
// encoding/json decodes them.

// SkipString checks the string whose opening quote is d[i] and returns
// the index just past its closing quote. Bytes from 0x80 are not decoded:
// invalid UTF-8 is no fault, as for encoding/json (which reads it as
// U+FFFD). On a fault, end is the offset where the grammar failed
// (len(d) for FaultStringEnd).
func SkipString(d []byte, i int) (end int, f Fault) {
	for i++; i < len(d); {
		if class[d[i]] != special {
			i++
			continue
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, NoFault
		case c < 0x20:
			return i, FaultControl
		case c == '\\':
			if i+1 < len(d) && unescaped(d[i+1]) != 0 {
				i += 2
				continue
			}
			_, n, f := Escape(d, i)
			if f != NoFault {
				return i, f
			}
			i = n
		default:
			i++
		}
	}
	return len(d), FaultStringEnd
}

// ScanString is SkipString that also measures the string the way a
// reader of its decoded value sees it: the number of runes encoding/json
// decodes it to (an escaped surrogate pair is one, an unpaired half one
// U+FFFD) and whether it holds escapes. It refuses raw invalid UTF-8
// (FaultUTF8), which a decoder rewrites: a caller that measures does not
// have to model that rewriting.
func ScanString(d []byte, i int) (end, runes int, escaped bool, f Fault) {
	for i++; i < len(d); {
		c := d[i]
		if class[c] == ascii {
			i++
			runes++
			continue
		}
		switch {
		case c == '"':
			return i + 1, runes, escaped, NoFault
		case c < 0x20:
			return i, 0, false, FaultControl
		case c < utf8.RuneSelf && c != '\\':
			i++
			runes++
		case c == '\\':
			escaped = true
			runes++
			if i+1 < len(d) && unescaped(d[i+1]) != 0 {
				i += 2
				continue
			}
			_, n, f := Escape(d, i)
			if f != NoFault {
				return i, 0, false, f
			}
			i = n
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return i, 0, false, FaultUTF8
			}
			i += size
			runes++
		}
	}
	return len(d), 0, false, FaultStringEnd
}

// Escape decodes the escape whose backslash is d[i]: the rune
// encoding/json decodes and the index just past the escape. A \u escape
// of the high half of a surrogate pair takes the low half's escape with
// it when one follows (12 bytes); an unpaired half is U+FFFD, and what
// follows it is the next character (6 bytes). On a fault, end is i.
func Escape(d []byte, i int) (r rune, end int, f Fault) {
	if i+1 >= len(d) {
		return 0, i, FaultEscapeEnd
	}
	if b := unescaped(d[i+1]); b != 0 {
		return rune(b), i + 2, NoFault
	}
	if d[i+1] != 'u' {
		return 0, i, FaultEscape
	}
	r, ok := hex4(d, i+2)
	if !ok {
		return 0, i, FaultHex
	}
	if !utf16.IsSurrogate(r) {
		return r, i + 6, NoFault
	}
	if j := i + 6; j+1 < len(d) && d[j] == '\\' && d[j+1] == 'u' {
		if r2, ok := hex4(d, j+2); ok {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, j + 6, NoFault
			}
		}
	}
	return utf8.RuneError, i + 6, NoFault
}

// unescaped is the byte that the two-byte escape \c stands for, or 0 when
// c starts no such escape (\u among them).
func unescaped(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}

// hex4 reads the four hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Plain returns the index of the first byte at or after i that a string's
// content cannot hold as it is: a quote, a backslash, a control byte or a
// byte from 0x80; or len(d). From the opening quote's index plus one, a
// string whose Plain stops at a quote is its own decoded content.
func Plain(d []byte, i int) int {
	for i < len(d) && class[d[i]] == ascii {
		i++
	}
	return i
}

// What a byte is inside a string, for the scans' inner loops: one load a
// byte instead of a chain of comparisons.
const (
	ascii   = iota // printable ASCII but the quote and the backslash
	high           // from 0x80: part of a UTF-8 sequence
	special        // the quote, the backslash, a control byte
)

// class is never written after it is built.
var class = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"' || c == '\\' || c < 0x20:
			t[c] = special
		case c >= utf8.RuneSelf:
			t[c] = high
		}
	}
	return t
}()

// AppendContent decodes a string from d[i], any offset inside it after its
// opening quote, to its closing quote: it appends the decoded bytes to dst
// (escapes resolved, invalid UTF-8 as U+FFFD, as encoding/json decodes)
// and returns dst and the index just past the closing quote. On a fault,
// end is the offset where the grammar failed (len(d) for FaultStringEnd)
// and dst holds what was decoded before it.
func AppendContent(dst, d []byte, i int) (out []byte, end int, f Fault) {
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			return dst, i + 1, NoFault
		case c < 0x20:
			return dst, i, FaultControl
		case c == '\\':
			if i+1 < len(d) {
				if b := unescaped(d[i+1]); b != 0 {
					dst = append(dst, b)
					i += 2
					continue
				}
			}
			r, n, f := Escape(d, i)
			if f != NoFault {
				return dst, i, f
			}
			if r < utf8.RuneSelf {
				dst = append(dst, byte(r))
			} else {
				dst = utf8.AppendRune(dst, r)
			}
			i = n
		case c < utf8.RuneSelf:
			j := Plain(d, i+1)
			dst = append(dst, d[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, d[i:i+size]...)
			}
			i += size
		}
	}
	return dst, len(d), FaultStringEnd
}
