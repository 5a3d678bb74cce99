package jsonscan

import (
	"math"

	"github.com/brisvox/brisvox/agent/jsonlex"
)

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
// whole grammar, including the parts it skips; strings, escapes and
// numbers are read by the module's one lexer, agent/jsonlex.
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
		s.err = jsonlex.SyntaxError(s.pos, expected)
	}
	s.pos = len(s.data)
	return s.err
}

// ws skips white space.
func (s *Scanner) ws() { s.pos = jsonlex.SkipSpace(s.data, s.pos) }

// moveTo ends a lexer call: the scan goes on at end, or fails there.
// Small enough to inline (failAt is kept out of line), so the lexer
// costs the hot walk one call.
func (s *Scanner) moveTo(end int, f jsonlex.Fault) {
	if f != jsonlex.NoFault {
		s.failAt(end, f)
		return
	}
	s.pos = end
}

// failAt records the lexer's fault at offset at.
//
//go:noinline
func (s *Scanner) failAt(at int, f jsonlex.Fault) {
	s.pos = at
	s.fail(f.Expected())
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
	i := jsonlex.Plain(s.data, start)
	if i < len(s.data) && s.data[i] == '"' {
		s.pos = i + 1
		return s.data[start:i]
	}
	// The slow part: escapes, control bytes or non-ASCII from i on.
	buf, end, f := jsonlex.AppendContent(append(s.scratch[:0], s.data[start:i]...), s.data, i)
	s.scratch = buf
	if f != jsonlex.NoFault {
		s.failAt(end, f)
		return nil
	}
	s.pos = end
	return s.scratch
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
	end, integral, f := jsonlex.Number(s.data, s.pos)
	s.moveTo(end, f)
	return end, integral && f == jsonlex.NoFault
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
		s.moveTo(jsonlex.SkipString(s.data, s.pos)) // checked, not copied
	case c == '{' || c == '[':
		s.skipContainer(c, depth)
	case c == '-' || ('0' <= c && c <= '9'):
		end, _, f := jsonlex.Number(s.data, s.pos)
		s.moveTo(end, f)
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
			s.moveTo(jsonlex.SkipString(s.data, s.pos)) // checked, not copied
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
