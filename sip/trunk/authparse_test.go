package trunk

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseAuthorization(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		scheme string
		params []authParam // nil: malformed
	}{
		{"tokens and quoted strings", `Digest a=b, c="d e"`, "Digest", []authParam{{"a", "b"}, {"c", "d e"}}},
		{"no spaces after commas", `Digest a="1",b=2`, "Digest", []authParam{{"a", "1"}, {"b", "2"}}},
		{"white space around = and ,", "Digest  a = \"1\" \t,\t b=2 ", "Digest", []authParam{{"a", "1"}, {"b", "2"}}},
		{"names in lower case", `Digest UserName="x"`, "Digest", []authParam{{"username", "x"}}},
		{"escaped quote and backslash", `Digest u="a\"b\\c"`, "Digest", []authParam{{"u", `a"b\c`}}},
		{"escaped ordinary char", `Digest u="\a"`, "Digest", []authParam{{"u", "a"}}},
		{"comma inside quotes", `Digest uri="sip:a,b", r="x"`, "Digest", []authParam{{"uri", "sip:a,b"}, {"r", "x"}}},
		{"empty quoted value", `Digest a=""`, "Digest", []authParam{{"a", ""}}},
		{"UTF-8 in quotes", "Digest u=\"jos\u00e9\"", "Digest", []authParam{{"u", "jos\u00e9"}}},
		// Mutation: keeping the last (or first) of two values lets a
		// header say two things.
		{"duplicate", `Digest a=1, a=2`, "", nil},
		{"duplicate in other case", `Digest a=1, A=2`, "", nil},
		{"no parameters", `Digest`, "", nil},
		{"scheme only with space", `Digest `, "", nil},
		{"empty element", `Digest a=1,, b=2`, "", nil},
		{"trailing comma", `Digest a=1,`, "", nil},
		{"missing value", `Digest a=`, "", nil},
		{"missing =", `Digest a`, "", nil},
		{"unterminated quote", `Digest a="x`, "", nil},
		{"escape at the end", `Digest a="x\`, "", nil},
		// Mutation: accepting CR/LF in a value lets a header inject
		// another into our logs or a forwarded message.
		{"CRLF in quotes", "Digest a=\"x\r\nVia: y\"", "", nil},
		{"escaped CR", "Digest a=\"x\\\r\"", "", nil},
		{"NUL in quotes", "Digest a=\"x\x00\"", "", nil},
		{"separator in token", `Digest a=b/c`, "", nil},
		{"junk after a value", `Digest a="b" c=d`, "", nil},
		{"too long", "Digest a=\"" + strings.Repeat("x", MaxAuthorizationBytes) + "\"", "", nil},
		{"value too long", "Digest a=\"" + strings.Repeat("x", maxParamLen+1) + "\"", "", nil},
		{"too many", "Digest " + manyParams(maxParams+1), "", nil},
		{"just enough", "Digest " + manyParams(maxParams), "Digest", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, params, err := parseAuthorization(tc.in, nil)
			if tc.scheme == "" {
				if err == nil {
					t.Fatalf("parsed %q as %v", tc.in, params)
				}
				return
			}
			if err != nil || scheme != tc.scheme {
				t.Fatalf("parse = %q, %v", scheme, err)
			}
			if tc.params != nil && !reflect.DeepEqual(params, tc.params) {
				t.Fatalf("params %v, want %v", params, tc.params)
			}
		})
	}
}

func manyParams(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("p" + itoa(i) + "=1")
	}
	return b.String()
}

func TestParseCredentialsRequired(t *testing.T) {
	full := map[string]string{
		"username": "alice", "realm": "brisvox", "nonce": "n", "uri": "sip:a", "response": "r",
		"qop": "auth", "nc": "00000001", "cnonce": "c",
	}
	build := func(skip string) string {
		var b strings.Builder
		b.WriteString("Digest ")
		first := true
		for _, k := range []string{"username", "realm", "nonce", "uri", "response", "qop", "nc", "cnonce"} {
			if k == skip {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(k + "=")
			quote(&b, full[k])
		}
		return b.String()
	}
	if _, err := parseCredentials(build(""), nil); err != nil {
		t.Fatalf("all present: %v", err)
	}
	for k := range full {
		if _, err := parseCredentials(build(k), nil); err == nil {
			t.Errorf("without %s: parsed", k)
		}
	}
	if _, err := parseCredentials(strings.Replace(build(""), "Digest", "digest", 1), nil); err != nil {
		t.Errorf("scheme case: %v", err)
	}
}
