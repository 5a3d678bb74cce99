package agentfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// examples are the agent files of examples/agents and the key variables
// each needs.
var examples = []struct {
	file string
	keys []string
}{
	{"local.toml", nil},
	{"local.yaml", nil},
	{"ollama.toml", nil},
	{"local-openai.toml", []string{"OPENAI_API_KEY", "BRISVOX_WEBRTC_TOKEN"}},
	{"openai.toml", []string{"DEEPGRAM_API_KEY", "OPENAI_API_KEY"}},
	{"anthropic.toml", []string{"DEEPGRAM_API_KEY", "ANTHROPIC_API_KEY", "ELEVENLABS_API_KEY"}},
	{"gemini.toml", []string{"DEEPGRAM_API_KEY", "GEMINI_API_KEY", "CARTESIA_API_KEY"}},
}

func examplePath(name string) string {
	return filepath.Join("..", "..", "..", "examples", "agents", name)
}

// TestExamples: every example is clean with its key variables set, and
// without them reports each one "not set" at the option naming it.
// Mutation caught: LookupEnv ignored (nothing reported without keys), a
// key variable reported though set, an example drifting from the schema,
// an example's guard dropped (local-openai.toml without its token_env:
// seen failing).
func TestExamples(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex.file, func(t *testing.T) {
			f, ds := Load(examplePath(ex.file), Options{LookupEnv: envWith(ex.keys...), KnownTools: catalogue})
			if len(ds) > 0 || f == nil {
				t.Fatalf("with %v set:\n%s", ex.keys, ds)
			}
			_, ds = Load(examplePath(ex.file), Options{LookupEnv: envWith(), KnownTools: catalogue})
			var unset []string
			for _, d := range ds {
				secret := strings.HasSuffix(d.Path, ".api_key_env") || strings.HasSuffix(d.Path, ".token_env")
				if !secret || !strings.Contains(d.Msg, "is not set") {
					t.Errorf("without keys: %s", d)
				}
				unset = append(unset, strings.Fields(d.Msg)[0])
			}
			for _, k := range ex.keys {
				if !strings.Contains(strings.Join(unset, " "), k) {
					t.Errorf("without keys: %s not reported (got %v)", k, unset)
				}
			}
		})
	}
}

// TestLocalBothFormats: local.toml and local.yaml are the same agent.
// Mutation caught: a YAML value decoded differently from its TOML twin
// (a duration, a list, a transport's default).
func TestLocalBothFormats(t *testing.T) {
	a, da := Load(examplePath("local.toml"), Options{KnownTools: catalogue})
	b, db := Load(examplePath("local.yaml"), Options{KnownTools: catalogue})
	if len(da)+len(db) > 0 {
		t.Fatalf("%s\n%s", da, db)
	}
	strip := func(f *File) string {
		// Compare values only: positions differ between the formats.
		var sb strings.Builder
		put := func(xs ...any) {
			for _, x := range xs {
				sb.WriteString(strings.TrimSpace(strings.ReplaceAll(toString(x), "\n", " ")))
				sb.WriteString("|")
			}
		}
		put(f.Name.V, f.Prompt.V, f.Greeting.V, f.STT.Name, f.LLM.Name, f.TTS.Name, f.VAD.Engine.V,
			f.VAD.Silero.Threshold.V, f.VAD.Silero.StopThreshold.V, f.VAD.Silero.MinSpeech.V, f.VAD.Silero.Hangover.V,
			f.Turn.EndOfTurnDelay.V, f.Turn.BargeInDelay.V, f.Turn.Speculate.V, f.Fillers.After.V,
			f.Rounds.MaxRounds.V, f.Rounds.RoundTimeout.V,
			f.Transports.WebRTC.Enabled.V, f.Transports.WebRTC.IncludeLoopback.V, f.Transports.PCM.Enabled.V,
			f.Transports.PCM.Rate.V, f.Transports.Twilio.Enabled.V, strings.Join(f.Tools.Names(), ","), f.Tools.Confirms("book_table"))
		for _, p := range f.Fillers.Phrases {
			put(p.V)
		}
		for _, p := range []Provider{f.STT, f.LLM, f.TTS} {
			for _, k := range []string{"interim_interval", "first_token", "token_gap", "voice"} {
				if o, ok := p.Options[k]; ok {
					put(k, o.String, o.Duration)
				}
			}
		}
		return sb.String()
	}
	if sa, sb := strip(a), strip(b); sa != sb {
		t.Errorf("toml and yaml differ:\n%s\n%s", sa, sb)
	}
}

func toString(x any) string {
	switch v := x.(type) {
	case string:
		return v
	case time.Duration:
		return v.String()
	}
	return fmt.Sprint(x)
}

// TestFileValues pins the typed values and the positions the command
// reports provider errors at.
// Mutation caught: Implied options not filled in (the command would not
// know which key to read), defaults not applied, a value's position taken
// from its table.
func TestFileValues(t *testing.T) {
	src := `prompt = "You help."
[stt]
provider = "deepgram"
endpointing = "300ms"
[llm]
provider = "openai"
model = "gpt-4.1-mini"
temperature = 0.5
[tts]
provider = "elevenlabs"
chunk_length_schedule = [50, 120]
[fillers]
after = "off"
[tools]
enabled = ["book_table"]
confirm = ["book_table"]
[transports.pcm]
[vad]
engine = "silero"
threshold = 0.6
`
	f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY", "ELEVENLABS_API_KEY")})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s", what)
		}
	}
	check("name from the file name", f.Name.V == "a" && !f.Name.Set)
	check("stt endpointing", f.STT.Options["endpointing"].Duration == 300*time.Millisecond && f.STT.Options["endpointing"].Pos == Pos{4, 15})
	key := f.STT.Options["api_key_env"]
	check("stt key implied", key.Kind == providers.TypeEnv && key.Pos == Pos{3, 12} && key.Implied && key.String == "DEEPGRAM_API_KEY")
	check("llm base_url implied", f.LLM.Options["base_url"].String == "https://api.openai.com/v1" && f.LLM.Options["base_url"].Implied)
	check("llm temperature", f.LLM.Options["temperature"].Float == 0.5 && f.LLM.Options["temperature"].Pos == Pos{8, 15})
	check("llm name pos", f.LLM.Name == "openai" && f.LLM.Pos == Pos{6, 12})
	check("tts ints", len(f.TTS.Options["chunk_length_schedule"].Ints) == 2 && f.TTS.Options["chunk_length_schedule"].Ints[1] == 120)
	check("fillers off", f.Fillers.After.V < 0 && f.Fillers.After.Set)
	check("confirm", f.Tools.Confirms("book_table") && f.Tools.Confirm[0].Pos == Pos{16, 12})
	check("pcm on by its table", f.Transports.PCM.Enabled.V && !f.Transports.PCM.Enabled.Set && f.Transports.PCM.Rate.V == 16000)
	check("webrtc off", !f.Transports.WebRTC.Enabled.V)
	check("defaults", f.Rounds.MaxRounds.V == 6 && f.Turn.DrainTimeout.V == 15*time.Second && f.VAD.Silero.MinSpeech.V == 64*time.Millisecond)
	check("silero", f.VAD.Engine.V == "silero" && f.VAD.Silero.Threshold == Value[float64]{V: 0.6, Pos: Pos{20, 13}, Set: true})
	check("stop threshold follows", f.VAD.Silero.StopThreshold.V > 0.449 && f.VAD.Silero.StopThreshold.V < 0.451 && !f.VAD.Silero.StopThreshold.Set)
	d := f.Diag(f.LLM.Options["temperature"].Pos, "llm.temperature", "refused by the provider", "")
	check("Diag", d.String() == "a.toml:8:15: llm.temperature: refused by the provider")

	// Another endpoint sends no key unless one is named.
	src2 := strings.Replace(strings.Split(src, "[vad]")[0], `model = "gpt-4.1-mini"`, `model = "llama3.2"`+"\n"+`base_url = "http://localhost:11434/v1"`, 1)
	f, ds = Parse("a.toml", []byte(src2), TOML, Options{LookupEnv: envWith("DEEPGRAM_API_KEY", "ELEVENLABS_API_KEY")})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	if o, ok := f.LLM.Options["api_key_env"]; ok {
		t.Errorf("a key variable for another endpoint: %+v", o)
	}
}

// TestDiagnosticString pins the printed form and Err.
// Mutation caught: the hint or the path left out of String, Err not
// wrapping ErrInvalid, Err non-nil for no diagnostics.
func TestDiagnosticString(t *testing.T) {
	cases := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"full", Diagnostic{File: "local.toml", Line: 12, Col: 3, Path: "llm.temperature", Msg: "3.5 is out of range 0..2", Hint: "0 to 2"},
			"local.toml:12:3: llm.temperature: 3.5 is out of range 0..2 (hint: 0 to 2)"},
		{"no path", Diagnostic{File: "a.yaml", Line: 1, Col: 1, Msg: "syntax error: x"}, "a.yaml:1:1: syntax error: x"},
		{"no position", Diagnostic{File: "a.txt", Msg: "unknown format"}, "a.txt: unknown format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if s := c.d.String(); s != c.want {
				t.Errorf("%q, want %q", s, c.want)
			}
		})
	}
	if (Diagnostics{}).Err() != nil {
		t.Error("Err of none is not nil")
	}
	ds := Diagnostics{{File: "b", Line: 2, Col: 1, Msg: "y"}, {File: "b", Line: 1, Col: 5, Msg: "x"}}
	err := ds.Err()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "b:1:5: x\nb:2:1: y") {
		t.Errorf("Err = %v", err)
	}
}

// TestLoad covers what Load adds to Parse.
// Mutation caught: the extension ignored (a .json read as TOML), a
// missing file reported without its name.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, data, want string }{
		{"agent.json", "{}", "agent.json: unknown format (hint: name the file .toml, .yaml or .yml)"},
		{"missing.toml", "", "missing.toml: cannot read"},
		{"big.yml", strings.Repeat("#", maxBytes+1), "big.yml: 1048577 bytes"},
	} {
		path := filepath.Join(dir, c.name)
		if c.data != "" {
			if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		f, ds := Load(path, Options{})
		if f != nil || len(ds) != 1 || !strings.HasPrefix(ds[0].String(), filepath.Join(dir, c.want)) {
			t.Errorf("%s: %v %v", c.name, f, ds)
		}
	}
}

// TestNoSecretInDiagnostics: a key written where its variable's name
// belongs, or in an unknown option, never appears in a diagnostic.
// Mutation caught: showValue or the env check echoing the value.
func TestNoSecretInDiagnostics(t *testing.T) {
	const secret = "sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	for _, src := range []string{
		"[llm]\nprovider = \"openai\"\nmodel = \"m\"\napi_key_env = \"" + secret + "\"\n",
		"[llm]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"" + secret + "\"\n",
		"[llm]\nprovider = \"openai\"\nmodel = \"m\"\nreasoning_effort = \"" + secret + "\"\n",
		"[llm]\nprovider = \"" + secret + "\"\n",
		"[llm]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"https://user:" + secret + "@host/v1\"\n",
	} {
		_, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith()})
		if len(ds) == 0 {
			t.Errorf("%q: no diagnostic", src)
		}
		for _, d := range ds {
			if strings.Contains(d.String(), secret[3:20]) {
				t.Errorf("the key is in %q", d)
			}
		}
	}
}
