package agentfile

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExpand: placeholders replaced by the call's variables, values
// inserted verbatim, every missing name in the error and no value.
// Mutations caught (each seen failing): values expanded again (a
// caller's name "{{x}}" turned into another variable), a missing
// variable left as its braces instead of an error, only the first
// missing name reported.
func TestExpand(t *testing.T) {
	vars := map[string]string{"first_name": "Ada", "slot": "9:30", "_x1": "", "inject": "{{slot}}"}
	cases := []struct {
		name, text, want string
		err              error
		errHas           []string
	}{
		{name: "no placeholder", text: "Hello { there } }}", want: "Hello { there } }}"},
		{name: "one", text: "Hello {{first_name}}.", want: "Hello Ada."},
		{name: "repeated and adjacent", text: "{{slot}}{{slot}} {{first_name}}", want: "9:309:30 Ada"},
		{name: "empty value", text: "a{{_x1}}b", want: "ab"},
		{name: "value not expanded again", text: "say {{inject}}", want: "say {{slot}}"},
		{name: "closing braces after", text: "{{slot}}}", want: "9:30}"},
		{name: "unicode around", text: "Bonjour {{first_name}}, ça va ?", want: "Bonjour Ada, ça va ?"},
		{name: "missing", text: "{{first_name}} {{account}} {{plan}} {{account}}", err: ErrMissingVariable, errHas: []string{"account, plan"}},
		{name: "unclosed", text: "Hello {{first_name", err: ErrPlaceholder, errHas: []string{"at byte 6", "not closed"}},
		{name: "empty name", text: "{{}}", err: ErrPlaceholder},
		{name: "digit first", text: "{{1st}}", err: ErrPlaceholder},
		{name: "spaces", text: "{{ first_name }}", err: ErrPlaceholder, errHas: []string{"spaces"}},
		{name: "too long", text: "{{" + strings.Repeat("a", 65) + "}}", err: ErrPlaceholder, errHas: []string{"65 bytes"}},
		{name: "triple brace", text: "{{{slot}}}", err: ErrPlaceholder},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Expand(c.text, vars)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				for _, h := range c.errHas {
					if !strings.Contains(err.Error(), h) {
						t.Errorf("error %q does not say %q", err, h)
					}
				}
				if strings.Contains(err.Error(), "Ada") || strings.Contains(err.Error(), "9:30") {
					t.Errorf("error shows a value: %v", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Expand = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	// The map is read, not written.
	if len(vars) != 4 {
		t.Errorf("vars changed: %v", vars)
	}
}

// placeholderBase is a valid agent without prompt or greeting (7
// lines); the cases add them.
const placeholderBase = `[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.webrtc]
`

// TestPlaceholderDiagnostics: a malformed placeholder is reported at its
// "{{" in the source, in one-line and multi-line strings of both formats;
// where an escape wrote the text otherwise, at the value.
// Mutations caught (each seen failing): the check of the greeting or of
// outbound.greeting dropped, the position left at the value's start for
// a multi-line prompt, YAML columns counted in bytes (a wrong column
// after "é").
func TestPlaceholderDiagnostics(t *testing.T) {
	cases := []struct {
		name   string
		format Format
		src    string
		want   []string
	}{
		{name: "valid", format: TOML, src: "prompt = \"You call {{first_name}} about {{slot}}.\"\ngreeting = \"Hello {{first_name}}\"\n" + placeholderBase},
		{name: "one line", format: TOML, src: "prompt = \"Hi {{first name}} and {{x\"\n" + placeholderBase,
			want: []string{`1:14 prompt: placeholder "{{first name}}" has a bad name`, `1:33 prompt: "{{" is not closed`}},
		{name: "multi-line prompt", format: TOML, src: "prompt = \"\"\"\nYou are the desk.\nCall {{ name }} now.\n\"\"\"\n" + placeholderBase,
			want: []string{`3:6 prompt: placeholder "{{ name }}" has spaces around its name`}},
		{name: "greeting", format: TOML, src: "prompt = \"p\"\ngreeting = \"Hello {{}}\"\n" + placeholderBase,
			want: []string{`2:19 greeting: empty placeholder "{{}}"`}},
		{name: "outbound greeting", format: TOML, src: "prompt = \"p\"\n" + placeholderBase + "[outbound]\ngreeting = \"Hi {{9lives}}\"\n",
			want: []string{`10:16 outbound.greeting: placeholder "{{9lives}}" has a bad name`}},
		{name: "escape before", format: TOML, src: "prompt = \"\\u0041 {{x}} {{\"\n" + placeholderBase,
			want: []string{`1:24 prompt: "{{" is not closed`}},
		{name: "escaped brace", format: TOML, src: "prompt = \"a \\u007b{x}} {{\"\n" + placeholderBase,
			want: []string{`1:10 prompt: "{{" is not closed`}},
		{name: "yaml plain", format: YAML, src: "prompt: Été {{first name}}\n" + yamlBase,
			want: []string{`1:13 prompt: placeholder "{{first name}}" has a bad name`}},
		{name: "yaml block", format: YAML, src: "prompt: |\n  Vous êtes l'accueil.\n  Appelez {{nom}} puis {{\n" + yamlBase,
			want: []string{`3:24 prompt: "{{" is not closed`}},
		{name: "yaml outbound", format: YAML, src: "prompt: p\n" + yamlBase + "outbound:\n  greeting: \"{{a-b}}\"\n",
			want: []string{`8:14 outbound.greeting: placeholder "{{a-b}}" has a bad name`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ds := Parse("a."+c.format.String(), []byte(c.src), c.format, Options{LookupEnv: envWith()})
			ds.Sort()
			if have := got(ds); !match(have, c.want) {
				t.Fatalf("diagnostics:\n%s\nwant prefixes:\n%s", strings.Join(have, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// yamlBase is placeholderBase in YAML (5 lines).
const yamlBase = `stt: {provider: pocketsphinx}
llm: {provider: rules}
tts: {provider: flite}
transports:
  webrtc: {}
`

// TestVariables: the names of the three texts, sorted and unique; the
// outbound greeting defaults to the top-level one.
// Mutation caught: outbound.greeting left out of Variables (a dial
// without the variable its greeting names would pass the API's check).
func TestVariables(t *testing.T) {
	src := "prompt = \"Call {{first_name}} about {{slot}}; {{first_name}} booked.\"\ngreeting = \"Hello {{first_name}}\"\n" + placeholderBase +
		"[outbound]\ngreeting = \"Hello {{first_name}}, this is {{agent_name}} about {{slot}}\"\n"
	f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if got, want := f.Variables(), []string{"agent_name", "first_name", "slot"}; !slices.Equal(got, want) {
		t.Errorf("Variables = %v, want %v", got, want)
	}
	f, ds = Parse("a.toml", []byte("prompt = \"p\"\n"+placeholderBase), TOML, Options{LookupEnv: envWith()})
	if len(ds) > 0 || f.Variables() != nil {
		t.Errorf("no placeholder: %v, %s", f.Variables(), ds)
	}
}

// TestOutbound: [outbound]'s defaults, its values, and its checks.
// Mutations caught (each seen failing): the greeting not falling back
// to the top level's, speak_first accepted with nothing to say,
// first_words_wait's range dropped.
func TestOutbound(t *testing.T) {
	f, ds := Parse("a.toml", []byte("prompt = \"p\"\ngreeting = \"Hello\"\n"+placeholderBase), TOML, Options{LookupEnv: envWith()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	o := f.Outbound
	if o.Greeting.V != "Hello" || o.Greeting.Set || o.Greeting.Pos != (Pos{2, 12}) || o.SpeakFirst.V || o.FirstWordsWait.V != 4*time.Second {
		t.Errorf("defaults: %+v", o)
	}
	f, ds = Parse("a.toml", []byte("prompt = \"p\"\n"+placeholderBase+"[outbound]\ngreeting = \"Hi, it is the clinic\"\nfirst_words_wait = \"1.5s\"\n"), TOML, Options{LookupEnv: envWith()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if o := f.Outbound; o.Greeting.V != "Hi, it is the clinic" || !o.Greeting.Set || o.FirstWordsWait.V != 1500*time.Millisecond {
		t.Errorf("values: %+v", o)
	}
	for _, c := range []struct{ name, table, want string }{
		{"speak first, nothing to say", "speak_first = true\n", "10:15 outbound.speak_first: speak_first with no greeting"},
		{"wait with speak_first", "greeting = \"Hi\"\nspeak_first = true\nfirst_words_wait = \"2s\"\n", "12:20 outbound.first_words_wait: first_words_wait is the wait"},
		{"wait too short", "first_words_wait = \"100ms\"\n", "10:20 outbound.first_words_wait: 100ms is out of range 500ms..30s"},
		{"wait too long", "first_words_wait = \"1m\"\n", "10:20 outbound.first_words_wait: 1m0s is out of range"},
		{"unknown key", "speakfirst = true\n", "10:1 outbound.speakfirst: unknown key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, ds := Parse("a.toml", []byte("prompt = \"p\"\n"+placeholderBase+"[outbound]\n"+c.table), TOML, Options{LookupEnv: envWith()})
			if have := got(ds); !match(have, []string{c.want}) {
				t.Fatalf("diagnostics:\n%s\nwant prefix %s", strings.Join(have, "\n"), c.want)
			}
		})
	}
}

// TestPlaceholderReportsBounded: a text of thousands of malformed
// placeholders gets the first maxPlaceholderReports reported, each at
// its own "{{".
// Mutation caught (seen failing): the bound dropped. Before it, each
// position was searched from the value's start, and `check` of a prompt
// of 2000 "{{}}" took 18 s.
func TestPlaceholderReportsBounded(t *testing.T) {
	src := "prompt = \"" + strings.Repeat("{{}}", 5000) + "\"\n" + placeholderBase
	_, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith()})
	var cols []int
	for _, d := range ds {
		if d.Path == "prompt" {
			cols = append(cols, d.Col)
		}
	}
	want := make([]int, maxPlaceholderReports)
	for i := range want {
		want[i] = 11 + 4*i
	}
	if !slices.Equal(cols, want) {
		t.Errorf("prompt diagnostics at columns %v, want %v", cols, want)
	}
}
