package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// walk reads any value with the Scanner into the shapes encoding/json
// gives with UseNumber: map[string]any, []any, string, bool, nil and
// json.Number.
func walk(s *Scanner) any {
	switch c := s.Peek(); {
	case c == '{':
		m := map[string]any{}
		if s.Object() {
			for s.More() {
				k := string(s.Key())
				m[k] = walk(s)
			}
		}
		return m
	case c == '[':
		a := []any{}
		if s.Array() {
			for s.More() {
				a = append(a, walk(s))
			}
		}
		return a
	case c == '"':
		return s.Str()
	case c == 't' || c == 'f':
		return s.Bool()
	case c == 'n':
		s.Null()
		return nil
	default:
		raw := s.Raw()
		if raw == nil {
			return nil
		}
		return json.Number(raw)
	}
}

// reference decodes data with encoding/json the way walk reads it.
func reference(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the value")
	}
	return v, nil
}

// check compares the Scanner with encoding/json on data: both refuse it,
// or both read the same value. Skip and Raw must agree with the walk.
func check(t *testing.T, data []byte) {
	t.Helper()
	var s Scanner
	s.Reset(data)
	got := walk(&s)
	err := s.Done()
	if err != nil && strings.Contains(err.Error(), "less nesting") {
		return // deeper than the decoders walk; encoding/json goes to 10000
	}
	want, werr := reference(data)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: scanner error %v, encoding/json error %v", data, err, werr)
	}
	if err != nil {
		if !errors.Is(err, ErrJSON) {
			t.Fatalf("%q: error %v does not wrap ErrJSON", data, err)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: scanner read %#v, encoding/json %#v", data, got, want)
	}
	s.Reset(data)
	s.Skip()
	if err := s.Done(); err != nil {
		t.Fatalf("%q: Skip refused what the walk read: %v", data, err)
	}
	s.Reset(data)
	raw := s.Raw()
	if err := s.Done(); err != nil || !bytes.Equal(raw, bytes.Trim(data, " \t\r\n")) {
		t.Fatalf("%q: Raw %q, %v", data, raw, err)
	}
}

var jsonCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `12`, `-1.5e+3`, `1E9`, `""`,
	` {"a" : [1, 2, {"b": null}], "c": "d"} `,
	`{"a":1,"a":2}`,
	`"\"\\\/\b\f\n\r\t\u00e9\u20ac"`,
	`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, `"\ud83d\ud83d"`,
	"\"caf\xc3\xa9\"", "\"bad \xff byte\"", "\"cut \xe2\x82\"",
	`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
	`[1,]`, `[,1]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, `{"a":1 "b":2}`,
	`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `tru`, `nul`, `"abc`, `"a\x"`, `"a\'"`, `"\u12"`, "\"a\x01\"",
	`{"a":[}`, `[{]`, `]`, `}`, `{} {}`, `1 2`, ``, ` `,
	strings.Repeat("[", 40) + strings.Repeat("]", 40),
}

func TestScannerMatchesEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		check(t, []byte(c))
	}
}

// FuzzScanner: on any input the Scanner and encoding/json agree on
// validity and value (keys matched exactly; encoding/json maps do too).
func FuzzScanner(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { check(t, data) })
}

func TestScannerInt(t *testing.T) {
	cases := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"42", 42, true},
		{"null", 0, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false},
		{"1.0", 0, false},
		{"1e2", 0, false},
		{`"1"`, 0, false},
		{"true", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			var s Scanner
			s.Reset([]byte(c.in))
			got := s.Int()
			err := s.Done()
			if (err == nil) != c.ok || got != c.want {
				t.Fatalf("Int(%s) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
			}
		})
	}
}

// TestScannerStickyError: after an error every read is zero and More is
// false, so a decoder's loop ends. Mutation caught: More ignoring s.err
// (this loop would not end within the bound).
func TestScannerStickyError(t *testing.T) {
	var s Scanner
	s.Reset([]byte(`{"a":[1,2,x],"b":"c"}`))
	n := 0
	if s.Object() {
		for s.More() && n < 100 {
			n++
			s.Key()
			if s.Array() {
				for s.More() && n < 100 {
					n++
					s.Int()
				}
			}
		}
	}
	if n >= 100 || s.Err() == nil || s.Str() != "" || s.Int() != 0 || s.Object() || s.More() {
		t.Fatalf("n=%d err=%v", n, s.Err())
	}
}

// TestScannerErrorHidesData: an error names the offset and what was
// expected, never the bytes of the data (they may be a transcript or
// arguments).
func TestScannerErrorHidesData(t *testing.T) {
	for _, in := range []string{`{"secret-word":"x" "y"}`, `["secret-word", secret]`, `"secret-word`} {
		var s Scanner
		s.Reset([]byte(in))
		s.Skip()
		err := s.Done()
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Fatalf("%s: error %v", in, err)
		}
	}
}

// TestScannerWrongShape: reading a string where a number is (and the
// other ways round) is an error, as decoding into a typed field is.
func TestScannerWrongShape(t *testing.T) {
	reads := map[string]func(*Scanner){
		"Str":    func(s *Scanner) { s.Str() },
		"Int":    func(s *Scanner) { s.Int() },
		"Bool":   func(s *Scanner) { s.Bool() },
		"Object": func(s *Scanner) { s.Object() },
		"Array":  func(s *Scanner) { s.Array() },
	}
	ins := map[string]string{"Str": `"s"`, "Int": `1`, "Bool": `true`, "Object": `{}`, "Array": `[]`}
	for rn, read := range reads {
		for in, data := range ins {
			var s Scanner
			s.Reset([]byte(data))
			read(&s)
			if in == rn {
				if s.Object() || s.Array() {
					t.Fatal("unreachable")
				}
				continue
			}
			if s.Err() == nil {
				t.Errorf("%s on %s: no error", rn, data)
			}
		}
	}
}

const benchChunk = `{"id":"chatcmpl-AbCdEf0123","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0123456789","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`

// readChunk reads a chat chunk's first text the way a decoder does.
func readChunk(s *Scanner, data []byte) (text []byte) {
	s.Reset(data)
	if s.Object() {
		for s.More() {
			if string(s.Key()) != "choices" {
				s.Skip()
				continue
			}
			if s.Array() {
				for s.More() {
					if s.Object() {
						for s.More() {
							if string(s.Key()) != "delta" {
								s.Skip()
								continue
							}
							if s.Object() {
								for s.More() {
									if string(s.Key()) == "content" {
										text = s.StrBytes()
									} else {
										s.Skip()
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return text
}

// TestScannerAllocs pins a chunk's walk at 0 allocations (only Str
// allocates, for the text it returns).
func TestScannerAllocs(t *testing.T) {
	var s Scanner
	data := []byte(benchChunk)
	if got := string(readChunk(&s, data)); got != " the" || s.Done() != nil {
		t.Fatalf("read %q, %v", got, s.Err())
	}
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	if n := testing.AllocsPerRun(100, func() { readChunk(&s, data) }); n != 0 {
		t.Fatalf("%v allocations per chunk, want 0", n)
	}
}

func BenchmarkScannerChunk(b *testing.B) {
	var s Scanner
	data := []byte(benchChunk)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		readChunk(&s, data)
	}
}

func BenchmarkEncodingJSONChunk(b *testing.B) {
	var c struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	data := []byte(benchChunk)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		c.Choices = c.Choices[:0]
		_ = json.Unmarshal(data, &c)
	}
}
