package jsonlex

// Number scans the JSON number starting at d[i], in the grammar
// encoding/json accepts:
//
//	-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
//
// It returns the index just past it and whether it is integral (neither a
// fraction nor an exponent). It stops at the longest number: what follows
// (a second leading zero, a letter) is the caller's to judge. On a fault,
// end is the offset where the grammar failed.
func Number(d []byte, i int) (end int, integral bool, f Fault) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = skipDigits(d, i)
	default:
		return i, false, FaultNumber
	}
	integral = true
	if i < len(d) && d[i] == '.' {
		integral = false
		j := skipDigits(d, i+1)
		if j == i+1 {
			return j, false, FaultFraction
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		integral = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return j, false, FaultExponent
		}
		i = j
	}
	return i, integral, NoFault
}

func skipDigits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

// NumberParts is the text of a number cut at its grammar's joints. Every
// slice points into the number.
type NumberParts struct {
	// Neg is true for a leading '-'.
	Neg bool
	// Int is the integer part's digits.
	Int []byte
	// Frac is the fraction's digits, without the point; empty when the
	// number has none.
	Frac []byte
	// ExpNeg is true for an exponent with a '-'.
	ExpNeg bool
	// Exp is the exponent's digits, without the e and the sign; empty when
	// the number has none.
	Exp []byte
}

// SplitNumber cuts num, the whole text of a number Number accepted, into
// its parts.
func SplitNumber(num []byte) NumberParts {
	var p NumberParts
	i := 0
	if i < len(num) && num[i] == '-' {
		p.Neg = true
		i++
	}
	j := skipDigits(num, i)
	p.Int, i = num[i:j], j
	if i < len(num) && num[i] == '.' {
		j = skipDigits(num, i+1)
		p.Frac, i = num[i+1:j], j
	}
	if i < len(num) && (num[i] == 'e' || num[i] == 'E') {
		i++
		if i < len(num) && (num[i] == '+' || num[i] == '-') {
			p.ExpNeg = num[i] == '-'
			i++
		}
		p.Exp = num[i:skipDigits(num, i)]
	}
	return p
}
