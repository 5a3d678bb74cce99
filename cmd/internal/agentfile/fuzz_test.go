package agentfile

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzParse checks the invariants of any input: no panic, a File, and
// every diagnostic positioned inside the input with a message and a hint
// (testdata/fuzz holds the bad files of testdata/bad as seeds).
func fuzzParse(t *testing.T, format Format, data []byte) {
	f, ds := Parse("fuzz", data, format, Options{LookupEnv: envWith("OPENAI_API_KEY"), KnownTools: catalogue})
	if f == nil && len(data) <= maxBytes {
		t.Fatal("no File")
	}
	lines := newLineIndex(data)
	for _, d := range ds {
		if !lines.inside(d.Pos()) || d.Msg == "" {
			t.Fatalf("diagnostic outside the input (%d bytes, %d lines): %s", len(data), len(lines.starts), d)
		}
		if d.Hint == "" {
			t.Fatalf("diagnostic without a hint: %s", d)
		}
	}
}

// seeds adds the examples and a few broken files.
func seeds(f *testing.F, format Format, broken ...string) {
	for _, ex := range examples {
		if fm, _ := FormatOf(ex.file); fm != format {
			continue
		}
		data, err := os.ReadFile(examplePath(ex.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, b := range broken {
		f.Add([]byte(b))
	}
}

// FuzzParseTOML: no TOML input panics or yields a diagnostic outside it.
func FuzzParseTOML(f *testing.F) {
	seeds(f, TOML, "", "[llm\n", "a = = 1", "[a]\nb.c = 1\n[a.b]\n", "x = [1, [2, {a = 1}]]\n", "\r\n[stt]\r\nprovider = 'deepgram'\r", "[[transports]]\n[[transports]]\n", "prompt = \"{{a}} {{\"\ngreeting = '{{ b }}'\n[outbound]\ngreeting = \"\"\"\n{{}}\"\"\"\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TOML, data) })
}

// FuzzParseYAML: no YAML input panics or yields a diagnostic outside it.
func FuzzParseYAML(f *testing.F) {
	seeds(f, YAML, "", "a: [", "a: &x [*x]\n", "a: &x {b: 1}\nc: {<<: *x}\n", "a: 1\r\rb: [\r", "---\n---\n", "? [a]\n: 1\n", "\ufeffa: 1\n", "prompt: |\n  {{a}} {{\noutbound: {greeting: '{{1}}'}\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, YAML, data) })
}

// tomlBasic writes s as a TOML basic string ("..."), escaping what must
// be.
func tomlBasic(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzExpand: for any text, the placeholders found are well-formed and in
// order; Expand with each name mapped to its own placeholder gives the
// text back, a value holding a placeholder is not expanded again, an
// error wraps its sentinel and shows no value; and the text written as
// a prompt gets one diagnostic per malformed placeholder (at most
// maxPlaceholderReports), each at a "{{" of the source or at the value (testdata/fuzz/FuzzExpand holds
// the seeds).
// Mutation caught: Expand re-expanding a value, a diagnostic placed
// past the "{{" it reports.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "Hello {{first_name}}", "{{a}}{{b}}", "{{", "{{}}", "{{ a }}", "{{{a}}}", "a}}{{b", "{{a\n}}", "é{{x}} {{1}}"} {
		f.Add(s)
	}
	f.Fuzz(checkExpand)
}

// checkExpand is FuzzExpand's check of one text.
func checkExpand(t *testing.T, text string) {
	const secret = "SECRET-VALUE"
	ps, bad := scanTemplate(text)
	last := 0
	for _, p := range ps {
		if p.at < last || text[p.at:p.end] != "{{"+p.name+"}}" || !validVariableName(p.name) {
			t.Fatalf("placeholder %+v of %q", p, text)
		}
		last = p.end
	}
	self, other := map[string]string{}, map[string]string{}
	for _, p := range ps {
		self[p.name] = "{{" + p.name + "}}"
		other[p.name] = secret + "{{never_set}}"
	}
	out, err := Expand(text, self)
	switch {
	case len(bad) > 0:
		if !errors.Is(err, ErrPlaceholder) {
			t.Fatalf("Expand(%q) = %v, want ErrPlaceholder", text, err)
		}
	case err != nil || out != text:
		t.Fatalf("Expand(%q, itself) = %q, %v", text, out, err)
	}
	if len(bad) == 0 {
		out, err = Expand(text, other)
		if err != nil || strings.Count(out, secret+"{{never_set}}") < len(ps) {
			t.Fatalf("Expand(%q, values with placeholders) = %q, %v", text, out, err)
		}
	}
	if _, err := Expand(text, nil); len(ps) > 0 && len(bad) == 0 && !errors.Is(err, ErrMissingVariable) || (len(ps) == 0 && len(bad) == 0) != (err == nil) {
		t.Fatalf("Expand(%q, nil): %v", text, err)
	}
	if !utf8.ValidString(text) {
		return // a file is UTF-8
	}
	src := []byte("prompt = " + tomlBasic(text) + "\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\n")
	fuzzParse(t, TOML, src)
	_, ds := Parse("fuzz.toml", src, TOML, Options{LookupEnv: envWith()})
	lines := newLineIndex(src)
	n := 0
	for _, d := range ds {
		if d.Path != "prompt" || d.Msg == "is empty" {
			continue
		}
		n++
		if p := d.Pos(); p != (Pos{1, 10}) && !strings.HasPrefix(string(src[lines.starts[p.Line-1]+p.Col-1:]), "{{") {
			t.Fatalf("%s is at no \"{{\" of %q", d, src)
		}
	}
	if n != min(len(bad), maxPlaceholderReports) {
		t.Fatalf("%d diagnostics of the prompt, %d malformed placeholders in %q: %s", n, len(bad), text, ds)
	}
}
