package agent

import (
	"unicode/utf16"
	"unicode/utf8"
)

// The fast validator's JSON scanner: index-based functions over the raw
// arguments that check the syntax encoding/json accepts and measure
// strings and numbers the way the schema library sees them after
// jsonschema.UnmarshalJSON, without building any value. Anything they do
// not reproduce exactly (invalid UTF-8, exponents math/big refuses) is
// reported as not ok, and the caller falls back to the library.

// maxFastExponent bounds the decimal exponent of a number the fast path
// reasons about. math/big refuses exponents past about 1e6 (the library
// then treats the number as non-integral, or panics on a bound); the fast
// path leaves every such number, and a margin, to the library.
const maxFastExponent = 100_000

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString scans the JSON string whose opening quote is d[i]. It returns
// the index just past the closing quote; the number of runes encoding/json
// decodes it to (an escaped surrogate that is not half of a valid pair is
// one U+FFFD, as the decoder writes it); and whether it holds escapes.
// ok is false for malformed strings and for raw invalid UTF-8, which the
// decoder rewrites and the fast path does not model.
func scanString(d []byte, i int) (end, runes int, escaped, ok bool) {
	i++ // the opening quote
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			return i + 1, runes, escaped, true
		case c < ' ':
			return i, 0, false, false
		case c < utf8.RuneSelf && c != '\\':
			i++
			runes++
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return i, 0, false, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				runes++
			case 'u':
				_, n := escapedRune(d[i:])
				if n == 0 {
					return i, 0, false, false
				}
				i += n
				runes++
			default:
				return i, 0, false, false
			}
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return i, 0, false, false
			}
			i += size
			runes++
		}
	}
	return i, 0, false, false
}

// escapedRune decodes the \uXXXX escape at the start of s, and the low
// half that follows when it is the high half of a valid surrogate pair. It
// returns the rune encoding/json decodes and the escape's length in bytes
// (6 or 12), or 0 when s does not start with a valid \u escape.
func escapedRune(s []byte) (rune, int) {
	r := hex4(s)
	if r < 0 {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if r1 := hex4(s[6:]); r1 >= 0 {
		if dec := utf16.DecodeRune(r, r1); dec != utf8.RuneError {
			return dec, 12
		}
	}
	// An unpaired half: the decoder writes U+FFFD and reads what follows
	// as the next character.
	return utf8.RuneError, 6
}

// hex4 is the value of the escape \uXXXX at the start of s, or -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// decodeString writes the decoded contents of a string that scanString
// accepted (raw is what lies between the quotes) into dst, as
// encoding/json decodes it. It returns the bytes written, or false when
// dst is too small.
func decodeString(dst, raw []byte) (int, bool) {
	w := 0
	for r := 0; r < len(raw); {
		c := raw[r]
		if c != '\\' {
			if w >= len(dst) {
				return w, false
			}
			dst[w] = c
			w++
			r++
			continue
		}
		var out rune
		switch raw[r+1] {
		case 'b':
			out = '\b'
		case 'f':
			out = '\f'
		case 'n':
			out = '\n'
		case 'r':
			out = '\r'
		case 't':
			out = '\t'
		case 'u':
			rr, n := escapedRune(raw[r:])
			if w+utf8.RuneLen(rr) > len(dst) {
				return w, false
			}
			w += utf8.EncodeRune(dst[w:], rr)
			r += n
			continue
		default: // '"', '\\', '/'
			out = rune(raw[r+1])
		}
		if w >= len(dst) {
			return w, false
		}
		dst[w] = byte(out)
		w++
		r += 2
	}
	return w, true
}

// scanNumber returns the index just past the JSON number starting at d[i]
// and whether it follows the grammar encoding/json accepts:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(d []byte, i int) (int, bool) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = skipDigits(d, i)
	default:
		return i, false
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// decimal is an exact view of a JSON number: its significant digits (hi
// then lo, leading and trailing zeros removed) read as 0.digits times
// 10^point. No digits is zero, whatever the sign ("-0" is 0, as for
// math/big). hi and lo point into the number's text.
type decimal struct {
	neg    bool
	hi, lo []byte
	point  int
}

// parseDecimal reads a number scanNumber accepted. It reports false when
// the exponent is beyond maxFastExponent.
func parseDecimal(num []byte) (decimal, bool) {
	var x decimal
	i := 0
	if num[0] == '-' {
		x.neg = true
		i++
	}
	j := skipDigits(num, i)
	ip := num[i:j]
	var fp []byte
	if j < len(num) && num[j] == '.' {
		k := skipDigits(num, j+1)
		fp = num[j+1 : k]
		j = k
	}
	exp := 0
	if j < len(num) {
		// 'e' or 'E', an optional sign, digits.
		j++
		neg := false
		if num[j] == '+' || num[j] == '-' {
			neg = num[j] == '-'
			j++
		}
		for ; j < len(num); j++ {
			exp = exp*10 + int(num[j]-'0')
			if exp > maxFastExponent {
				return decimal{}, false
			}
		}
		if neg {
			exp = -exp
		}
	}
	for len(ip) > 0 && ip[0] == '0' {
		ip = ip[1:]
	}
	if len(ip) > 0 {
		x.point = len(ip) + exp
	} else {
		z := 0
		for z < len(fp) && fp[z] == '0' {
			z++
		}
		fp = fp[z:]
		x.point = exp - z
	}
	for len(fp) > 0 && fp[len(fp)-1] == '0' {
		fp = fp[:len(fp)-1]
	}
	if len(fp) == 0 {
		for len(ip) > 0 && ip[len(ip)-1] == '0' {
			ip = ip[:len(ip)-1]
		}
	}
	x.hi, x.lo = ip, fp
	if x.isZero() {
		return decimal{}, true
	}
	return x, true
}

func (x decimal) digits() int { return len(x.hi) + len(x.lo) }

func (x decimal) isZero() bool { return x.digits() == 0 }

// digit is the k-th significant digit, '0' past the last.
func (x decimal) digit(k int) byte {
	switch {
	case k < len(x.hi):
		return x.hi[k]
	case k < x.digits():
		return x.lo[k-len(x.hi)]
	default:
		return '0'
	}
}

// isInteger says whether x has no fractional part, as math/big's
// Rat.IsInt does for the same text (1.0, 1e2 and -0 are integers).
func (x decimal) isInteger() bool {
	return x.isZero() || x.point >= x.digits()
}

func (x decimal) sign() int {
	switch {
	case x.isZero():
		return 0
	case x.neg:
		return -1
	default:
		return 1
	}
}

// cmpDecimal compares x and y exactly: -1, 0 or +1.
func cmpDecimal(x, y decimal) int {
	sx, sy := x.sign(), y.sign()
	if sx != sy || sx == 0 {
		return cmpInt(sx, sy)
	}
	mag := 0
	if x.point != y.point {
		mag = cmpInt(x.point, y.point)
	} else {
		n := max(x.digits(), y.digits())
		for k := 0; k < n && mag == 0; k++ {
			mag = cmpInt(int(x.digit(k)), int(y.digit(k)))
		}
	}
	return sx * mag
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	default:
		return 0
	}
}
