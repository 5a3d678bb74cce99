package jsonlex

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkNumber holds Number to encoding/json on d: it accepts the whole of
// d exactly when json.Valid takes d for one number (white space aside),
// integral says whether the text has neither fraction nor exponent, and
// SplitNumber's parts put the text back together.
func checkNumber(t *testing.T, d []byte) {
	t.Helper()
	if len(d) == 0 || (d[0] != '-' && (d[0] < '0' || d[0] > '9')) {
		return
	}
	end, integral, f := Number(d, 0)
	valid := json.Valid(d)
	if got := f == NoFault && SkipSpace(d, end) == len(d); got != valid {
		t.Fatalf("%q: Number end %d of %d, %q; json.Valid %v", d, end, len(d), f.Expected(), valid)
	}
	if f != NoFault || end > len(d) {
		return
	}
	num := d[:end]
	if integral == bytes.ContainsAny(num, ".eE") {
		t.Fatalf("%q: integral %v", num, integral)
	}
	p := SplitNumber(num)
	var back []byte
	if p.Neg {
		back = append(back, '-')
	}
	back = append(back, p.Int...)
	if len(p.Frac) > 0 {
		back = append(back, '.')
		back = append(back, p.Frac...)
	}
	if len(p.Exp) > 0 {
		back = append(back, 'e')
		if p.ExpNeg {
			back = append(back, '-')
		}
		back = append(back, p.Exp...)
	}
	canon := strings.NewReplacer("E+", "e", "e+", "e", "E", "e").Replace(string(num))
	if string(back) != canon {
		t.Fatalf("%q: split into %+v, which reads back as %q", num, p, back)
	}
}

var numberCases = []string{
	"0", "-0", "7", "12", "-12", "1.5", "-0.25", "1e9", "1E9", "1e+9", "1e-9", "-1.5e+3", "12.50E-03",
	"123456789012345678901234567890",
	"01", "-", "-a", "1.", "1.e3", ".5", "1e", "1e+", "1E-", "--1", "0x1", "1 ", "1,", "00",
}

// TestNumberMatchesEncodingJSON: the table of the number grammar's edges.
// Mutations seen failing: a fraction allowed without digits ("1."); an
// exponent's sign taken as its digits ("1e+"); integral true with an
// exponent; SplitNumber dropping a negative exponent's sign.
func TestNumberMatchesEncodingJSON(t *testing.T) {
	for _, c := range numberCases {
		t.Run(c, func(t *testing.T) { checkNumber(t, []byte(c)) })
	}
}

// TestNumberFaults pins where a number scan stops, and the longest-number
// rule (what follows is the caller's).
func TestNumberFaults(t *testing.T) {
	cases := []struct {
		in       string
		at       int
		integral bool
		f        Fault
	}{
		{"-", 1, false, FaultNumber},
		{"-x", 1, false, FaultNumber},
		{"x", 0, false, FaultNumber},
		{"1.", 2, false, FaultFraction},
		{"1.x", 2, false, FaultFraction},
		{"1e", 2, false, FaultExponent},
		{"1e+", 3, false, FaultExponent},
		{"2.5E-x", 5, false, FaultExponent},
		{"01", 1, true, NoFault},
		{"12,", 2, true, NoFault},
		{"-3.25e2]", 7, false, NoFault},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			end, integral, f := Number([]byte(c.in), 0)
			if end != c.at || integral != c.integral || f != c.f {
				t.Fatalf("Number(%s) = %d, %v, %q; want %d, %v, %q", c.in, end, integral, f.Expected(), c.at, c.integral, c.f.Expected())
			}
		})
	}
}

// FuzzNumber: on any input that starts like a number, Number and
// encoding/json agree (checkNumber).
func FuzzNumber(f *testing.F) {
	for _, c := range numberCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, d []byte) { checkNumber(t, d) })
}

func BenchmarkNumber(b *testing.B) {
	d := []byte("-12345.678e-9")
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		Number(d, 0)
	}
}
