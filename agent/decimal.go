package agent

import "github.com/brisvox/brisvox/agent/jsonlex"

// The fast validator's numbers: an exact view of a JSON number's value,
// compared the way the schema library compares them after
// jsonschema.UnmarshalJSON (math/big), without building any value. The
// grammar of the text is the lexer's (agent/jsonlex); what is beyond the
// fast path (exponents math/big refuses) is reported as not ok, and the
// caller falls back to the library.

// maxFastExponent bounds the decimal exponent of a number the fast path
// reasons about. math/big refuses exponents past about 1e6 (the library
// then treats the number as non-integral, or panics on a bound); the fast
// path leaves every such number, and a margin, to the library.
const maxFastExponent = 100_000

// decimal is an exact view of a JSON number: its significant digits (hi
// then lo, leading and trailing zeros removed) read as 0.digits times
// 10^point. No digits is zero, whatever the sign ("-0" is 0, as for
// math/big). hi and lo point into the number's text.
type decimal struct {
	neg    bool
	hi, lo []byte
	point  int
}

// parseDecimal reads a number jsonlex.Number accepted. It reports false
// when the exponent is beyond maxFastExponent.
func parseDecimal(num []byte) (decimal, bool) {
	parts := jsonlex.SplitNumber(num)
	x := decimal{neg: parts.Neg}
	ip, fp := parts.Int, parts.Frac
	exp := 0
	for _, c := range parts.Exp {
		exp = exp*10 + int(c-'0')
		if exp > maxFastExponent {
			return decimal{}, false
		}
	}
	if parts.ExpNeg {
		exp = -exp
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
