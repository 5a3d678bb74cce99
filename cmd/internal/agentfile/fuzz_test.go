package agentfile

import (
	"os"
	"testing"
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
	seeds(f, TOML, "", "[llm\n", "a = = 1", "[a]\nb.c = 1\n[a.b]\n", "x = [1, [2, {a = 1}]]\n", "\r\n[stt]\r\nprovider = 'deepgram'\r", "[[transports]]\n[[transports]]\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, TOML, data) })
}

// FuzzParseYAML: no YAML input panics or yields a diagnostic outside it.
func FuzzParseYAML(f *testing.F) {
	seeds(f, YAML, "", "a: [", "a: &x [*x]\n", "a: &x {b: 1}\nc: {<<: *x}\n", "a: 1\r\rb: [\r", "---\n---\n", "? [a]\n: 1\n", "\ufeffa: 1\n")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzParse(t, YAML, data) })
}
