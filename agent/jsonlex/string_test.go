package jsonlex

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkString holds the string functions to encoding/json on d, the text
// of one JSON value: SkipString accepts exactly the strings json.Valid
// does, AppendContent decodes them as json.Unmarshal does, and ScanString
// accepts those of them without raw invalid UTF-8, counting the decoded
// runes and noting the escapes.
func checkString(t *testing.T, d []byte) {
	t.Helper()
	if len(d) == 0 || d[0] != '"' {
		return
	}
	end, f := SkipString(d, 0)
	valid := json.Valid(d)
	if got := f == NoFault && SkipSpace(d, end) == len(d); got != valid {
		t.Fatalf("%q: SkipString end %d of %d, %v; json.Valid %v", d, end, len(d), f.Expected(), valid)
	}
	if f != NoFault && (end < 0 || end > len(d)) {
		t.Fatalf("%q: fault at %d, outside the data", d, end)
	}
	content, cend, cf := AppendContent([]byte("prefix"), d, 1)
	if cf != f || cend != end {
		t.Fatalf("%q: AppendContent ends at %d, %v; SkipString at %d, %v", d, cend, cf.Expected(), end, f.Expected())
	}
	send, runes, escaped, sf := ScanString(d, 0)
	if !valid {
		if sf == NoFault && SkipSpace(d, send) == len(d) {
			t.Fatalf("%q: ScanString accepts what json.Valid refuses", d)
		}
		return
	}
	var want string
	if err := json.Unmarshal(d, &want); err != nil {
		t.Fatalf("%q: json.Valid but Unmarshal: %v", d, err)
	}
	if got := string(content[len("prefix"):]); !bytes.HasPrefix(content, []byte("prefix")) || got != want {
		t.Fatalf("%q: AppendContent decodes %q, encoding/json %q", d, got, want)
	}
	raw := d[1 : end-1]
	if !utf8.Valid(raw) {
		if sf != FaultUTF8 {
			t.Fatalf("%q: ScanString fault %v on raw invalid UTF-8, want FaultUTF8", d, sf.Expected())
		}
		return
	}
	if sf != NoFault || send != end {
		t.Fatalf("%q: ScanString end %d, %v; want the whole string", d, send, sf.Expected())
	}
	if runes != utf8.RuneCountInString(want) {
		t.Fatalf("%q: ScanString counts %d runes, the decoded string has %d", d, runes, utf8.RuneCountInString(want))
	}
	if escaped != bytes.ContainsRune(raw, '\\') {
		t.Fatalf("%q: escaped %v", d, escaped)
	}
	if p := Plain(d, 1); (p == end-1) != (want == string(raw) && !strings.ContainsFunc(want, func(r rune) bool { return r >= utf8.RuneSelf || r < 0x20 })) {
		t.Fatalf("%q: Plain stops at %d", d, p)
	}
}

var stringCases = []string{
	`""`, `"a"`, `"plain ascii text"`,
	`"\"\\\/\b\f\n\r\t"`, `"\u00e9\u20AC"`, `"caf\u00E9"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\ud83dx"`, `"\ud83d\"`,
	"\"caf\xc3\xa9\"", "\"bad \xff byte\"", "\"cut \xe2\x82\"", "\"\xed\xa0\x80\"", "\"\u2028\"",
	`"abc`, `"a\x"`, `"\u12"`, `"\u12g4"`, `"\'"`, `"\`, `"\u`, "\"a\x01\"", "\"\x1f\"", "\"tab\there\"",
	`"a" `, `"a"b`,
}

// TestStringMatchesEncodingJSON: the table of the string grammar's edges
// (escapes, surrogate halves, invalid UTF-8, truncations). Mutations seen
// failing: ScanString counting an escaped surrogate pair as two runes;
// Escape taking \' for an escape; a lone high surrogate consuming the
// escape after it; AppendContent copying raw invalid UTF-8.
func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, c := range stringCases {
		t.Run(c, func(t *testing.T) { checkString(t, []byte(c)) })
	}
}

// TestStringFaults pins where a string scan stops and what it says: the
// offsets are those of the error messages the scanners write.
func TestStringFaults(t *testing.T) {
	cases := []struct {
		name, in string
		at       int
		f        Fault
	}{
		{"unterminated", `"abc`, 4, FaultStringEnd},
		{"control", "\"ab\x01c\"", 3, FaultControl},
		{"bad escape", `"ab\x"`, 3, FaultEscape},
		{"escape at the end", `"ab\`, 3, FaultEscapeEnd},
		{"short hex", `"\u12"`, 1, FaultHex},
		{"bad hex", `"x\u12g4"`, 2, FaultHex},
		{"bad low half", `"\ud83d\u12"`, 7, FaultHex},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := []byte(c.in)
			if end, f := SkipString(d, 0); end != c.at || f != c.f {
				t.Errorf("SkipString: %d, %q; want %d, %q", end, f.Expected(), c.at, c.f.Expected())
			}
			if end, _, _, f := ScanString(d, 0); end != c.at || f != c.f {
				t.Errorf("ScanString: %d, %q; want %d, %q", end, f.Expected(), c.at, c.f.Expected())
			}
			if _, end, f := AppendContent(nil, d, 1); end != c.at || f != c.f {
				t.Errorf("AppendContent: %d, %q; want %d, %q", end, f.Expected(), c.at, c.f.Expected())
			}
		})
	}
	if _, _, _, f := ScanString([]byte("\"a\xffb\""), 0); f != FaultUTF8 {
		t.Errorf("ScanString on invalid UTF-8: %q", f.Expected())
	}
}

// TestEscape pins each escape's rune and length, the surrogate rules
// among them.
func TestEscape(t *testing.T) {
	cases := []struct {
		in string
		r  rune
		n  int
		f  Fault
	}{
		{`\"`, '"', 2, NoFault}, {`\\`, '\\', 2, NoFault}, {`\/`, '/', 2, NoFault},
		{`\b`, '\b', 2, NoFault}, {`\f`, '\f', 2, NoFault}, {`\n`, '\n', 2, NoFault},
		{`\r`, '\r', 2, NoFault}, {`\t`, '\t', 2, NoFault},
		{`\u0041`, 'A', 6, NoFault}, {`\u20aC`, '€', 6, NoFault},
		{`\ud83d\ude00`, '😀', 12, NoFault},
		{`\ud83d\u0041`, utf8.RuneError, 6, NoFault}, // a high half, then an ordinary escape
		{`\ude00\ud83d`, utf8.RuneError, 6, NoFault}, // halves in the wrong order
		{`\ud83d`, utf8.RuneError, 6, NoFault},
		{`\'`, 0, 0, FaultEscape}, {`\x`, 0, 0, FaultEscape}, {`\`, 0, 0, FaultEscapeEnd},
		{`\u004`, 0, 0, FaultHex}, {`\u00G1`, 0, 0, FaultHex},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			r, end, f := Escape([]byte(c.in), 0)
			if r != c.r || end != c.n || f != c.f {
				t.Fatalf("Escape(%s) = %q, %d, %q; want %q, %d, %q", c.in, r, end, f.Expected(), c.r, c.n, c.f.Expected())
			}
		})
	}
}

// FuzzString: on any input that starts with a quote, the string functions
// and encoding/json agree (checkString).
func FuzzString(f *testing.F) {
	for _, c := range stringCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, d []byte) { checkString(t, d) })
}

// TestStringAllocs pins the scans at no allocation, and AppendContent at
// none into a buffer large enough.
func TestStringAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	d := []byte(`"caf\u00e9 \ud83d\ude00 and a tab\t, done"`)
	buf := make([]byte, 0, len(d))
	n := testing.AllocsPerRun(100, func() {
		SkipString(d, 0)
		ScanString(d, 0)
		buf, _, _ = AppendContent(buf[:0], d, 1)
	})
	if n != 0 {
		t.Fatalf("%v allocations, want 0", n)
	}
}

const benchString = `"The table for two is booked for eight o'clock, caf\u00e9 on the terrace \ud83d\ude00."`

func BenchmarkSkipString(b *testing.B) {
	d := []byte(benchString)
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		SkipString(d, 0)
	}
}

func BenchmarkScanString(b *testing.B) {
	d := []byte(benchString)
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		ScanString(d, 0)
	}
}

func BenchmarkAppendContent(b *testing.B) {
	d := []byte(benchString)
	buf := make([]byte, 0, len(d))
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _ = AppendContent(buf[:0], d, 1)
	}
}
