package jsonscan

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrJSON is wrapped by every error of a Scanner: the data is not JSON,
// or not of the shape the decoder asked for. The detail names an offset
// and what was expected, never the data itself (it may be a transcript or
// a tool's arguments).
var ErrJSON = errors.New("invalid JSON")

// Nesting bounds. The decoders walk a few levels of a chunk; a skipped
// value may nest deeper, up to maxSkipDepth (encoding/json allows 10000;
// no vendor sends more than a dozen).
const (
	maxNavDepth  = 32
	maxSkipDepth = 512
)

// Scanner reads one JSON value in place, for the adapters' per-chunk
// decoders: the decoder walks the objects it knows and skips the rest, and
// nothing is allocated except the strings it asks for (Str). It checks the
// whole grammar, including the parts it skips.
//
// The semantics are those of encoding/json decoding into a struct, except
// that keys match exactly (encoding/json folds case): null reads as the
// zero value, invalid UTF-8 and lone surrogates in strings read as U+FFFD,
// an integer field refuses fractions, exponents and overflow.
//
// The first error sticks: every later call returns the zero value and
// More returns false, so a decoder's loops end by themselves; Err and
// Done report it. A Scanner is reused across chunks with Reset.
type Scanner struct {
	data    []byte
	pos     int
	err     error
	depth   int
	first   [maxNavDepth]bool
	closer  [maxNavDepth]byte
	scratch []byte // unescaped strings; reused
}

// Reset starts reading data, keeping the scanner's buffers.
func (s *Scanner) Reset(data []byte) {
	s.data, s.pos, s.err, s.depth = data, 0, nil, 0
}

// Err is the first error, or nil.
func (s *Scanner) Err() error { return s.err }

// Done checks that the value is complete and only white space follows;
// it returns the first error.
func (s *Scanner) Done() error {
	if s.err != nil {
		return s.err
	}
	if s.depth != 0 {
		return s.fail("an unfinished value")
	}
	s.ws()
	if s.pos != len(s.data) {
		return s.fail("the end of the data")
	}
	return nil
}

// fail records the first error: what was expected, at the current offset.
func (s *Scanner) fail(expected string) error {
	if s.err == nil {
		s.err = fmt.Errorf("%w: at offset %d: expected %s", ErrJSON, s.pos, expected)
	}
	s.pos = len(s.data)
	return s.err
}

// ws skips white space.
func (s *Scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek is the next byte after white space, or 0 at the end.
func (s *Scanner) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// Peek tells what comes next without consuming it: '{', '[', '"', 't',
// 'f', 'n', '-' or a digit for a number, or 0 at the end or after an
// error.
func (s *Scanner) Peek() byte {
	if s.err != nil {
		return 0
	}
	return s.peek()
}

// Null consumes a null if one is next and tells whether it did.
func (s *Scanner) Null() bool {
	if s.err != nil || s.peek() != 'n' {
		return false
	}
	return s.literal("null")
}

// literal consumes the word w (null, true, false).
func (s *Scanner) literal(w string) bool {
	if len(s.data)-s.pos < len(w) || string(s.data[s.pos:s.pos+len(w)]) != w {
		s.fail(w)
		return false
	}
	s.pos += len(w)
	return true
}

// Object enters an object and returns true; the members are read with
// More and Key. A null is consumed and returns false; anything else is an
// error.
func (s *Scanner) Object() bool { return s.enter('{', '}', "an object") }

// Array enters an array and returns true; the elements are read with
// More. A null is consumed and returns false; anything else is an error.
func (s *Scanner) Array() bool { return s.enter('[', ']', "an array") }

func (s *Scanner) enter(open, close byte, what string) bool {
	if s.err != nil {
		return false
	}
	switch s.peek() {
	case open:
	case 'n':
		s.literal("null")
		return false
	default:
		s.fail(what)
		return false
	}
	if s.depth == maxNavDepth {
		s.fail("less nesting")
		return false
	}
	s.pos++
	s.first[s.depth], s.closer[s.depth] = true, close
	s.depth++
	return true
}

// More tells whether the object or array entered last has another member
// or element, consuming the comma before it; at the end it consumes the
// closing bracket, leaves the level and returns false. In an object, Key
// reads the member's name next, then the value must be read or skipped.
func (s *Scanner) More() bool {
	if s.err != nil || s.depth == 0 {
		return false
	}
	lvl := s.depth - 1
	c := s.peek()
	if c == s.closer[lvl] {
		// A comma is consumed only when a value follows it, so a closer
		// here ends a complete list.
		s.pos++
		s.depth--
		return false
	}
	if s.first[lvl] {
		s.first[lvl] = false
		if c == 0 {
			s.fail("a value or the end of the " + kind(s.closer[lvl]))
			return false
		}
		return true
	}
	if c != ',' {
		s.fail("',' or the end of the " + kind(s.closer[lvl]))
		return false
	}
	s.pos++
	if s.peek() == s.closer[lvl] {
		s.fail("a value after ','")
		return false
	}
	return true
}

func kind(closer byte) string {
	if closer == '}' {
		return "object"
	}
	return "array"
}

// Key reads a member's name and the colon after it. The bytes are valid
// until the next call that reads a string.
func (s *Scanner) Key() []byte {
	if s.err != nil {
		return nil
	}
	if s.depth == 0 || s.closer[s.depth-1] != '}' {
		s.fail("a value, not a key")
		return nil
	}
	if s.peek() != '"' {
		s.fail("a member name")
		return nil
	}
	k := s.str()
	if s.peek() != ':' {
		s.fail("':'")
		return nil
	}
	s.pos++
	return k
}

// StrBytes reads a string; null reads as nil. The bytes are valid until
// the next call that reads a string: compare them, do not keep them.
func (s *Scanner) StrBytes() []byte {
	if s.err != nil || s.Null() {
		return nil
	}
	if s.peek() != '"' {
		s.fail("a string")
		return nil
	}
	return s.str()
}

// Str reads a string; null reads as "". This is the one call that
// allocates: the string it returns.
func (s *Scanner) Str() string {
	b := s.StrBytes()
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

// str reads the string at s.pos (its opening quote): the bytes in place
// when they need no change, else unescaped (and invalid UTF-8 replaced)
// into the scratch buffer.
func (s *Scanner) str() []byte {
	start := s.pos + 1
	i := start
	for i < len(s.data) {
		c := s.data[i]
		if c == '"' {
			s.pos = i + 1
			return s.data[start:i]
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	// The slow part: escapes, control bytes or non-ASCII from i on.
	s.scratch = append(s.scratch[:0], s.data[start:i]...)
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return s.scratch
		case c < 0x20:
			s.pos = i
			s.fail("no control character in a string")
			return nil
		case c == '\\':
			n, ok := s.escape(i)
			if !ok {
				return nil
			}
			i = n
		case c < utf8.RuneSelf:
			s.scratch = append(s.scratch, c)
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				s.scratch = utf8.AppendRune(s.scratch, utf8.RuneError)
			} else {
				s.scratch = append(s.scratch, s.data[i:i+size]...)
			}
			i += size
		}
	}
	s.pos = len(s.data)
	s.fail("the end of a string")
	return nil
}

// escape appends the escape at s.data[i] (a backslash) to the scratch
// buffer and returns the offset after it.
func (s *Scanner) escape(i int) (int, bool) {
	if i+1 >= len(s.data) {
		s.pos = i
		s.fail("an escape")
		return 0, false
	}
	var c byte
	switch s.data[i+1] {
	case '"', '\\', '/':
		c = s.data[i+1]
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		r, ok := hex4(s.data, i+2)
		if !ok {
			s.pos = i
			s.fail("four hex digits after \\u")
			return 0, false
		}
		i += 6
		if utf16.IsSurrogate(r) {
			// A pair is two escapes; anything else is a lone surrogate,
			// which reads as U+FFFD (as encoding/json does).
			if i+1 < len(s.data) && s.data[i] == '\\' && s.data[i+1] == 'u' {
				if r2, ok := hex4(s.data, i+2); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						s.scratch = utf8.AppendRune(s.scratch, dec)
						return i + 6, true
					}
				}
			}
			r = utf8.RuneError
		}
		s.scratch = utf8.AppendRune(s.scratch, r)
		return i, true
	default:
		s.pos = i
		s.fail("a valid escape")
		return 0, false
	}
	s.scratch = append(s.scratch, c)
	return i + 2, true
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
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

// Int reads an integer; null reads as 0. A fraction, an exponent or a
// value outside int is an error, as for an int field of encoding/json.
func (s *Scanner) Int() int {
	if s.err != nil || s.Null() {
		return 0
	}
	start := s.pos
	end, integral := s.number()
	if s.err != nil {
		return 0
	}
	if !integral {
		s.pos = start
		s.fail("an integer")
		return 0
	}
	b := s.data[start:end]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v uint64
	for _, c := range b {
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			s.pos = start
			s.fail("an integer in range")
			return 0
		}
		v = v*10 + d
	}
	if neg {
		if v > -math.MinInt {
			s.pos = start
			s.fail("an integer in range")
			return 0
		}
		return int(-v)
	}
	if v > math.MaxInt {
		s.pos = start
		s.fail("an integer in range")
		return 0
	}
	return int(v)
}

// Bool reads true or false; null reads as false.
func (s *Scanner) Bool() bool {
	if s.err != nil {
		return false
	}
	switch s.peek() {
	case 't':
		return s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.fail("a boolean")
	}
	return false
}

// number consumes a number at s.pos and returns its end and whether it has
// neither fraction nor exponent.
func (s *Scanner) number() (int, bool) {
	b, i := s.data, s.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		s.fail("a number")
		return 0, false
	}
	integral := true
	if i < len(b) && b[i] == '.' {
		integral = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.pos = i
			s.fail("a digit after '.'")
			return 0, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integral = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.pos = i
			s.fail("a digit in the exponent")
			return 0, false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	s.pos = i
	return i, integral
}

// Raw reads any value and returns its bytes as they are in the data
// (checked, not copied: valid until Reset). Leading white space is not
// part of it.
func (s *Scanner) Raw() []byte {
	if s.err != nil {
		return nil
	}
	s.ws()
	start := s.pos
	s.skip(0)
	if s.err != nil {
		return nil
	}
	return s.data[start:s.pos]
}

// Skip reads any value and drops it, checking its grammar.
func (s *Scanner) Skip() {
	if s.err == nil {
		s.skip(0)
	}
}

func (s *Scanner) skip(depth int) {
	if depth > maxSkipDepth {
		s.fail("less nesting")
		return
	}
	switch c := s.peek(); {
	case c == '"':
		s.skipString()
	case c == '{' || c == '[':
		s.skipContainer(c, depth)
	case c == '-' || ('0' <= c && c <= '9'):
		s.number()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.fail("a value")
	}
}

// skipContainer skips the object or array opening at s.pos.
func (s *Scanner) skipContainer(open byte, depth int) {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.pos++
	if s.peek() == closer {
		s.pos++
		return
	}
	for s.err == nil {
		if open == '{' {
			if s.peek() != '"' {
				s.fail("a member name")
				return
			}
			s.skipString()
			if s.peek() != ':' {
				s.fail("':'")
				return
			}
			s.pos++
		}
		s.skip(depth + 1)
		switch s.peek() {
		case ',':
			s.pos++
		case closer:
			s.pos++
			return
		default:
			s.fail("',' or the end of the " + kind(closer))
		}
	}
}

// skipString checks and skips the string at s.pos without copying it.
func (s *Scanner) skipString() {
	b := s.data
	for i := s.pos + 1; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			s.pos = i + 1
			return
		case c < 0x20:
			s.pos = i
			s.fail("no control character in a string")
			return
		case c == '\\':
			if i+1 >= len(b) {
				s.pos = i
				s.fail("an escape")
				return
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					s.pos = i
					s.fail("four hex digits after \\u")
					return
				}
				i += 6
			default:
				s.pos = i
				s.fail("a valid escape")
				return
			}
		default:
			i++
		}
	}
	s.pos = len(b)
	s.fail("the end of a string")
}
