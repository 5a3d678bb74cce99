package agentfile

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Settings written in the other format's syntax, as hints must not show
// them: a TOML assignment or table header in a YAML hint, a YAML
// "key: value" of a known setting in a TOML hint.
var (
	tomlAssign = regexp.MustCompile(`(^|[\s(\[{,])[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)* = `)
	tomlHeader = regexp.MustCompile(`\[([a-z_]+)(\.[a-z_]+)*\]`)
	yamlAssign = regexp.MustCompile(`(^|[\s(\[{,])([a-z][a-z0-9_]*): `)
	docNames   = regexp.MustCompile("`\\[?([a-z][a-z0-9_.]*)\\]?`")
)

// tables are the tables of an agent file.
var tables = []string{"stt", "llm", "tts", "vad", "turn", "fillers", "tools", "dtmf", "transports", "serve", "outbound", "records", "tracing"}

// settingNames are the names a file can hold: the tables, every provider
// option, and every field documented in docs/CONFIG.md's Agent files
// section.
func settingNames(t *testing.T) map[string]bool {
	names := map[string]bool{"provider": true, "warm": true, "warm_required": true}
	for _, n := range tables {
		names[n] = true
	}
	for _, p := range Providers() {
		for _, o := range p.Table.List {
			names[o.Name] = true
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "CONFIG.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Agent files\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range docNames.FindAllStringSubmatch(first, -1) {
			for _, part := range strings.Split(m[1], ".") {
				names[part] = true
			}
		}
	}
	return names
}

// wrongSyntax is the part of hint written in the other format's syntax,
// or "".
func wrongSyntax(f Format, hint string, names map[string]bool) string {
	switch f {
	case YAML:
		if m := tomlAssign.FindString(hint); m != "" {
			return m
		}
		for _, m := range tomlHeader.FindAllStringSubmatch(hint, -1) {
			if contains(tables, m[1]) {
				return m[0]
			}
		}
	case TOML:
		for _, m := range yamlAssign.FindAllStringSubmatch(hint, -1) {
			if names[m[2]] {
				return m[0]
			}
		}
	}
	return ""
}

// badFile is a file of testdata/bad: its first lines say what it must
// produce ("# want: path: message" and "# hint: part of its hint").
type badFile struct {
	name       string
	format     Format
	data       []byte
	want, hint string
}

func badFiles(t testing.TB) []badFile {
	paths, err := filepath.Glob(filepath.Join("testdata", "bad", "*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	var out []badFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		format, ok := FormatOf(p)
		if !ok {
			t.Fatalf("%s: unknown format", p)
		}
		b := badFile{name: filepath.Base(p), format: format, data: data}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "# want: "); ok {
				b.want = v
			} else if v, ok := strings.CutPrefix(line, "# hint: "); ok {
				b.hint = v
			}
		}
		if b.want == "" {
			t.Fatalf("%s: no '# want:' line", p)
		}
		out = append(out, b)
	}
	return out
}

// TestBadFiles reads every file of testdata/bad (each a small agent with
// one kind of mistake, in TOML or YAML): the diagnostic it wants is
// there with the hint it wants, every diagnostic has a hint, and no hint
// shows a setting in the other format's syntax.
// Mutations caught (each seen failing before its fix): a YAML tab
// reported as "found character that cannot start any token" with no
// hint; a negative duration, an integer for a duration and a TOML
// syntax error without a hint; YAML files told `name = "..."`; a TOML
// file told `hangover: 300ms` (Format.Setting's branches swapped).
func TestBadFiles(t *testing.T) {
	names := settingNames(t)
	env := envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY", "TOKEN_SET")
	for _, b := range badFiles(t) {
		t.Run(b.name, func(t *testing.T) {
			_, ds := Parse(b.name, b.data, b.format, Options{LookupEnv: env, KnownTools: catalogue})
			var hit *Diagnostic
			for i, d := range ds {
				if hit == nil && strings.Contains(strings.TrimPrefix(d.Path+": "+d.Msg, ": "), b.want) {
					hit = &ds[i]
				}
				if d.Hint == "" {
					t.Errorf("no hint: %s", d)
				}
				if w := wrongSyntax(b.format, d.Hint, names); w != "" {
					t.Errorf("a %s hint in the other syntax (%q): %s", b.format, w, d)
				}
			}
			switch {
			case hit == nil:
				t.Errorf("no diagnostic %q in:\n%s", b.want, ds)
			case !strings.Contains(hit.Hint, b.hint):
				t.Errorf("hint %q, want it to contain %q", hit.Hint, b.hint)
			}
		})
	}
}

// TestWrongSyntax: the detector of TestBadFiles sees what it must.
// Mutation caught: a regexp that never matches (the test above could
// not fail).
func TestWrongSyntax(t *testing.T) {
	names := map[string]bool{"hangover": true, "stt": true}
	for _, c := range []struct {
		f     Format
		hint  string
		wrong bool
	}{
		{YAML, `hangover = "300ms"`, true},
		{YAML, `e.g. vad.hangover = "300ms"`, true},
		{YAML, `enable [transports.webrtc]`, true},
		{YAML, `hangover: 300ms`, false},
		{YAML, `codecs: [opus]`, false},
		{YAML, `export K=...`, false},
		{TOML, `e.g. hangover: 300ms`, true},
		{TOML, `stt: {provider: flite}`, true},
		{TOML, `hangover = "300ms"`, false},
		{TOML, `known: a, b`, false},
	} {
		if got := wrongSyntax(c.f, c.hint, names) != ""; got != c.wrong {
			t.Errorf("%s %q: wrong=%v, want %v", c.f, c.hint, got, c.wrong)
		}
	}
}

// TestSetting pins how a setting is written in each format.
// Mutation caught: a YAML string quoted when plain is fine, one left
// plain that YAML reads as something else, a duration written "2m0s".
func TestSetting(t *testing.T) {
	for _, c := range []struct {
		f         Format
		key       string
		v         any
		want      string
		in, want2 string
	}{
		{TOML, "hangover", "300ms", `hangover = "300ms"`, "vad", `hangover = "300ms" in [vad]`},
		{YAML, "hangover", "300ms", `hangover: 300ms`, "vad", `vad: {hangover: 300ms}`},
		{YAML, "terminator", "#", `terminator: '#'`, "", `terminator: '#'`},
		{YAML, "speculate", "yes", `speculate: "yes"`, "", `speculate: "yes"`},
		{YAML, "x", "5", `x: "5"`, "", `x: "5"`},
		{YAML, "rate", 16000, `rate: 16000`, "transports.pcm", `transports: {pcm: {rate: 16000}}`},
		{TOML, "codecs", []string{"opus", "G722"}, `codecs = ["opus", "G722"]`, "", `codecs = ["opus", "G722"]`},
		{YAML, "codecs", []string{"opus", "[::1]:5060"}, `codecs: [opus, '[::1]:5060']`, "", `codecs: [opus, '[::1]:5060']`},
		{YAML, "stun", []string{"stun:a.example:3478"}, `stun: ["stun:a.example:3478"]`, "", ""},
		{TOML, "drain_timeout", 2 * 60 * 1e9 * 1.0, `drain_timeout = 120000000000`, "", ""},
	} {
		if got := c.f.Setting(c.key, c.v); got != c.want {
			t.Errorf("Setting(%q, %v) in %s = %s, want %s", c.key, c.v, c.f, got, c.want)
		}
		if c.want2 != "" {
			if got := c.f.In(c.in, c.key, c.v); got != c.want2 {
				t.Errorf("In(%q, %q) in %s = %s, want %s", c.in, c.key, c.f, got, c.want2)
			}
		}
	}
	if got := TOML.Table("transports.webrtc"); got != "[transports.webrtc]" {
		t.Errorf("Table in toml = %s", got)
	}
	if got := YAML.Table("transports.webrtc"); got != "transports: {webrtc: {}}" {
		t.Errorf("Table in yaml = %s", got)
	}
	for d, want := range map[string]string{"2m0s": "2m", "1h30m0s": "1h30m", "1h0m0s": "1h", "300ms": "300ms", "1m30s": "1m30s"} {
		dur, _ := parseDur(d)
		if got := durationString(dur); got != want {
			t.Errorf("durationString(%s) = %s, want %s", d, got, want)
		}
	}
}

func parseDur(s string) (time.Duration, error) { return time.ParseDuration(s) }

// TestYAMLTab: a tab in a YAML file is reported at the tab, whichever
// line yaml.v3 names, with the hint to indent with spaces.
// Mutation caught: the tab search dropped (1:1 or the neighbour line,
// and only yaml.v3's "found character that cannot start any token").
func TestYAMLTab(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      Pos
	}{
		{"start of a key", "prompt: p\nstt:\n\tprovider: deepgram\n", Pos{3, 1}},
		{"after spaces", "prompt: p\nvad:\n  engine: energy\n  \tthreshold: 500\n", Pos{4, 3}},
		{"under a key", "a:\n  b: 1\n\tc: 2\n", Pos{3, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := Parse("a.yaml", []byte(c.src), YAML, Options{LookupEnv: envWith()})
			if len(ds) == 0 || ds[0].Pos() != c.want || !strings.HasPrefix(ds[0].Msg, "syntax error: a tab") || !strings.Contains(ds[0].Hint, "never tabs") {
				t.Errorf("got %s, want a tab at %s", ds, c.want)
			}
		})
	}
}
