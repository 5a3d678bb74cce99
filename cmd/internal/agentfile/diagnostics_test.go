package agentfile

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
)

// catalogue is the tool catalogue the command passes (cmd/brisvox).
var catalogue = []string{"get_time", "save_note", "book_table", "end_call", "send_dtmf", "transfer_call"}

// envWith is a LookupEnv with only the given variables set.
func envWith(vars ...string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, v := range vars {
			if v == name {
				return "set", true
			}
		}
		return "", false
	}
}

// got renders diagnostics as "line:col path: msg" for comparison.
func got(ds Diagnostics) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%d:%d %s: %s", d.Line, d.Col, d.Path, d.Msg)
	}
	return out
}

// match tells whether every want is a prefix of the diagnostic at its
// index, and there are as many.
func match(have, want []string) bool {
	if len(have) != len(want) {
		return false
	}
	for i := range want {
		if !strings.HasPrefix(have[i], want[i]) {
			return false
		}
	}
	return true
}

// diagCase is one file in both formats and the diagnostics expected of
// each, sorted by position: "line:col path: message prefix".
type diagCase struct {
	name       string
	toml, yaml string
	wantTOML   []string
	wantYAML   []string
	hint       string // a substring of the first diagnostic's hint
	hintYAML   string // the same for the YAML file, when it differs
}

// TestDiagnostics is one case per check, in TOML and YAML, with the exact
// line:column of each diagnostic. Each case is a small valid agent with
// one or a few things broken; everything else must stay quiet.
// Mutations caught (each seen failing): the range check of a provider
// option removed; unknown keys not reported (done skipped); the 8 kHz
// check dropped or reported at 1:1; confirm not checked against enabled;
// the key variable looked up under the wrong name; the walk stopping at
// the first problem.
func TestDiagnostics(t *testing.T) {
	cases := []diagCase{
		{
			name: "clean",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.webrtc]
`,
			yaml: `prompt: p
stt: {provider: deepgram}
llm: {provider: rules}
tts: {provider: flite}
transports: {webrtc: {}}
`,
		},
		{
			name: "missing prompt and stages",
			toml: "[transports.webrtc]\n",
			yaml: "transports: {webrtc: {}}\n",
			wantTOML: []string{
				"1:1 prompt: missing", "1:1 stt: missing", "1:1 llm: missing", "1:1 tts: missing",
			},
			wantYAML: []string{
				"1:1 prompt: missing", "1:1 stt: missing", "1:1 llm: missing", "1:1 tts: missing",
			},
			hint:     "prompt = ",
			hintYAML: "prompt: You are",
		},
		{
			name: "empty file",
			toml: "",
			yaml: "",
			wantTOML: []string{
				"1:1 prompt: missing", "1:1 stt: missing", "1:1 llm: missing", "1:1 tts: missing", "1:1 transports: no transport",
			},
			wantYAML: []string{
				"1:1 prompt: missing", "1:1 stt: missing", "1:1 llm: missing", "1:1 tts: missing", "1:1 transports: no transport",
			},
		},
		{
			name: "unknown keys at every level",
			toml: `prompt = "p"
promt = "q"
[stt]
provider = "deepgram"
[llm]
provider = "rules"
first_tokn = "1s"
[tts]
provider = "flite"
[turn]
end_of_turn_dealy = "1s"
[transports.webrtc]
`,
			yaml: `prompt: p
promt: q
stt: {provider: deepgram}
llm:
  provider: rules
  first_tokn: 1s
tts: {provider: flite}
turn:
  end_of_turn_dealy: 1s
transports: {webrtc: {}}
`,
			wantTOML: []string{
				`2:1 promt: unknown key "promt"`,
				`7:1 llm.first_tokn: unknown option "first_tokn" for rules`,
				`11:1 turn.end_of_turn_dealy: unknown key "end_of_turn_dealy"`,
			},
			wantYAML: []string{
				`2:1 promt: unknown key "promt"`,
				`6:3 llm.first_tokn: unknown option "first_tokn" for rules`,
				`9:3 turn.end_of_turn_dealy: unknown key "end_of_turn_dealy"`,
			},
			hint: `did you mean "prompt"?`,
		},
		{
			name: "unknown provider",
			toml: `prompt = "p"
[stt]
provider = "whisper"
[llm]
provider = "openia"
model = "m"
[tts]
provider = "flite"
[transports.webrtc]
`,
			yaml: `prompt: p
stt:
  provider: whisper
llm:
  provider: openia
  model: m
tts: {provider: flite}
transports: {webrtc: {}}
`,
			wantTOML: []string{`3:12 stt.provider: unknown stt provider "whisper"`, `5:12 llm.provider: unknown llm provider "openia"`},
			wantYAML: []string{`3:13 stt.provider: unknown stt provider "whisper"`, `5:13 llm.provider: unknown llm provider "openia"`},
			hint:     "known: deepgram, pocketsphinx",
		},
		{
			name: "missing provider and required option",
			toml: `prompt = "p"
[stt]
model = "nova-3"
[llm]
provider = "openai"
[tts]
provider = "flite"
[transports.webrtc]
`,
			yaml: `prompt: p
stt:
  model: nova-3
llm:
  provider: openai
tts: {provider: flite}
transports: {webrtc: {}}
`,
			wantTOML: []string{"2:2 stt.provider: missing", "5:12 llm.model: missing: openai needs model", "5:12 llm.api_key_env: OPENAI_API_KEY is not set"},
			wantYAML: []string{"2:1 stt.provider: missing", "5:13 llm.model: missing: openai needs model", "5:13 llm.api_key_env: OPENAI_API_KEY is not set"},
		},
		{
			name: "wrong types",
			toml: `prompt = 5
[stt]
provider = "deepgram"
smart_format = "yes"
[llm]
provider = "rules"
token_gap = 40
[tts]
provider = "flite"
[turn]
speculate = "yes"
[transports]
webrtc = true
pcm = {}
`,
			yaml: `prompt: 5
stt:
  provider: deepgram
  smart_format: "yes"
llm:
  provider: rules
  token_gap: 40
tts: {provider: flite}
turn:
  speculate: "yes"
transports:
  webrtc: true
  pcm: {}
`,
			wantTOML: []string{
				"1:10 prompt: want a string, got an integer",
				"4:16 stt.smart_format: want true or false, got a string",
				`7:13 llm.token_gap: want a duration such as "250ms", got an integer`,
				"11:13 turn.speculate: want true or false, got a string",
				"13:10 transports.webrtc: want a table, got a boolean",
			},
			wantYAML: []string{
				"1:9 prompt: want a string, got an integer",
				"4:17 stt.smart_format: want true or false, got a string",
				`7:14 llm.token_gap: want a duration such as "250ms", got an integer`,
				"10:14 turn.speculate: want true or false, got a string",
				"12:11 transports.webrtc: want a table, got a boolean",
			},
		},
		{
			name: "out of range",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
keep_alive = "12s"
[llm]
provider = "openai"
api_key_env = "K"
model = "m"
temperature = 3.5
max_rounds = 30
[tts]
provider = "cartesia"
api_key_env = "K"
sample_rate = 11025
[vad]
engine = "energy"
threshold = 0
[transports.pcm]
rate = 44100
`,
			yaml: `prompt: p
stt:
  provider: deepgram
  keep_alive: 12s
llm:
  provider: openai
  api_key_env: K
  model: m
  temperature: 3.5
  max_rounds: 30
tts:
  provider: cartesia
  api_key_env: K
  sample_rate: 11025
vad:
  engine: energy
  threshold: 0
transports:
  pcm: {rate: 44100}
`,
			wantTOML: []string{
				"4:14 stt.keep_alive: 12s is out of range 1s..9.999s",
				"9:15 llm.temperature: 3.5 is out of range 0..2",
				"10:14 llm.max_rounds: 30 is out of range 1..20",
				"14:15 tts.sample_rate: 11025 is not one of 8000, 16000, 22050, 24000, 44100, 48000",
				"17:13 vad.threshold: 0 is out of range 1..32767",
				"19:8 transports.pcm.rate: 44100 is not one of 8000, 16000, 24000, 48000",
			},
			wantYAML: []string{
				"4:15 stt.keep_alive: 12s is out of range 1s..9.999s",
				"9:16 llm.temperature: 3.5 is out of range 0..2",
				"10:15 llm.max_rounds: 30 is out of range 1..20",
				"14:16 tts.sample_rate: 11025 is not one of",
				"17:14 vad.threshold: 0 is out of range 1..32767",
				"19:15 transports.pcm.rate: 44100 is not one of",
			},
		},
		{
			name: "key variables not set",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "openai"
model = "m"
[tts]
provider = "elevenlabs"
api_key_env = "MY_ELEVEN_KEY"
[transports.webrtc]
`,
			yaml: `prompt: p
stt: {provider: deepgram}
llm: {provider: openai, model: m}
tts:
  provider: elevenlabs
  api_key_env: MY_ELEVEN_KEY
transports: {webrtc: {}}
`,
			wantTOML: []string{
				"3:12 stt.api_key_env: DEEPGRAM_API_KEY is not set (deepgram's key variable by default)",
				"5:12 llm.api_key_env: OPENAI_API_KEY is not set",
				"9:15 tts.api_key_env: MY_ELEVEN_KEY is not set",
			},
			wantYAML: []string{
				"2:17 stt.api_key_env: DEEPGRAM_API_KEY is not set",
				"3:17 llm.api_key_env: OPENAI_API_KEY is not set",
				"6:16 tts.api_key_env: MY_ELEVEN_KEY is not set",
			},
			hint:     "export DEEPGRAM_API_KEY=... or start from examples/agents/local.toml",
			hintYAML: "export DEEPGRAM_API_KEY=... or start from examples/agents/local.yaml",
		},
		{
			name: "literal keys",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
api_key_env = "dg_0123456789abcdef0123456789"
[llm]
provider = "openai"
model = "m"
api_key_env = "sk-proj-abc"
[tts]
provider = "flite"
[transports.webrtc]
`,
			yaml: `prompt: p
stt:
  provider: deepgram
  api_key_env: dg_0123456789abcdef0123456789
llm:
  provider: openai
  model: m
  api_key_env: sk-proj-abc
tts: {provider: flite}
transports: {webrtc: {}}
`,
			wantTOML: []string{
				"4:15 stt.api_key_env: holds what looks like a key itself",
				"8:15 llm.api_key_env: holds what looks like a key itself",
			},
			wantYAML: []string{
				"4:16 stt.api_key_env: holds what looks like a key itself",
				"8:16 llm.api_key_env: holds what looks like a key itself",
			},
			hint: "put the key in an environment variable",
		},
		{
			name: "tools",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "rules"
[tts]
provider = "flite"
[tools]
enabled = ["get_time", "book_tabel", "end_call", "get_time"]
confirm = ["book_table", "end_call"]
[transports.webrtc]
`,
			yaml: `prompt: p
stt: {provider: deepgram}
llm: {provider: rules}
tts: {provider: flite}
tools:
  enabled:
    - get_time
    - book_tabel
    - end_call
    - get_time
  confirm: [book_table, end_call]
transports: {webrtc: {}}
`,
			wantTOML: []string{
				`9:24 tools.enabled[1]: unknown tool "book_tabel"`,
				"9:50 tools.enabled[3]: get_time is listed twice",
				"10:12 tools.confirm[0]: book_table is in confirm but not enabled",
			},
			wantYAML: []string{
				`8:7 tools.enabled[1]: unknown tool "book_tabel"`,
				"10:7 tools.enabled[3]: get_time is listed twice",
				"11:13 tools.confirm[0]: book_table is in confirm but not enabled",
			},
			hint: `did you mean "book_table"?`,
		},
		{
			name: "pocketsphinx on telephony",
			toml: `prompt = "p"
[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.twilio]
enabled = true
[transports.pcm]
rate = 8000
`,
			yaml: `prompt: p
stt: {provider: pocketsphinx}
llm: {provider: rules}
tts: {provider: flite}
transports:
  twilio: {enabled: true}
  pcm:
    rate: 8000
`,
			wantTOML: []string{
				"9:11 transports.twilio: pocketsphinx hears 16 kHz audio only; a telephony transport brings 8 kHz",
				"11:8 transports.pcm.rate: pocketsphinx hears 16 kHz audio only",
			},
			wantYAML: []string{
				"6:21 transports.twilio: pocketsphinx hears 16 kHz audio only; a telephony transport brings 8 kHz",
				"8:11 transports.pcm.rate: pocketsphinx hears 16 kHz audio only",
			},
			hint: "use deepgram for telephony or turn the transport off",
		},
		{
			name: "twilio table without enabled",
			toml: `prompt = "p"
[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.twilio]
path = "/phone"
`,
			yaml: `prompt: p
stt: {provider: pocketsphinx}
llm: {provider: rules}
tts: {provider: flite}
transports:
  twilio:
    path: /phone
`,
			wantTOML: []string{"8:13 transports.twilio: pocketsphinx hears 16 kHz"},
			wantYAML: []string{"6:3 transports.twilio: pocketsphinx hears 16 kHz"},
		},
		{
			name: "stage settings that do not go together",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "rules"
[tts]
provider = "flite"
[vad]
engine = "energy"
hangover = "300ms"
[turn]
speculate = true
[fillers]
after = "1s"
per_tool = true
[transports.webrtc]
`,
			yaml: `prompt: p
stt: {provider: deepgram}
llm: {provider: rules}
tts: {provider: flite}
vad:
  engine: energy
  hangover: 300ms
turn:
  speculate: true
fillers:
  after: 1s
  per_tool: true
transports: {webrtc: {}}
`,
			wantTOML: []string{
				"10:1 vad.hangover: hangover is a setting of the silero engine; engine is energy",
				"12:13 turn.speculate: speculation needs an end-of-turn delay",
				"15:12 fillers.per_tool: per_tool and after together",
			},
			wantYAML: []string{
				"7:3 vad.hangover: hangover is a setting of the silero engine; engine is energy",
				"9:14 turn.speculate: speculation needs an end-of-turn delay",
				"12:13 fillers.per_tool: per_tool and after together",
			},
		},
		{
			// Catches end_of_turn_max taken without end_of_turn_by_text,
			// and a max below the delay after finished words (each seen
			// failing with its check removed).
			name: "end of turn by text",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "rules"
[tts]
provider = "flite"
[turn]
end_of_turn_max = "1s"
[transports.webrtc]
`,
			yaml: `prompt: p
stt: {provider: deepgram}
llm: {provider: rules}
tts: {provider: flite}
turn:
  end_of_turn_by_text: true
  end_of_turn_delay: 300ms
  end_of_turn_max: 200ms
transports: {webrtc: {}}
`,
			wantTOML: []string{"9:19 turn.end_of_turn_max: end_of_turn_max is the wait after words left hanging, with end_of_turn_by_text"},
			wantYAML: []string{"8:20 turn.end_of_turn_max: end_of_turn_max is below end_of_turn_delay"},
		},
		{
			name: "no transport",
			toml: `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.webrtc]
enabled = false
`,
			yaml: `prompt: p
stt: {provider: deepgram}
llm: {provider: rules}
tts: {provider: flite}
transports:
  webrtc: {enabled: false}
`,
			wantTOML: []string{"8:2 transports: no transport is enabled"},
			wantYAML: []string{"5:1 transports: no transport is enabled"},
		},
		{
			name: "syntax error keeps what came before",
			toml: `prompt = "p"
[stt]
provider = "whisper"
[llm
`,
			yaml: `prompt: p
stt:
  provider: whisper
llm: [
`,
			// The TOML tree holds what came before the error and is
			// checked (without "missing" diagnostics); yaml.v3 gives no
			// partial tree.
			wantTOML: []string{`3:12 stt.provider: unknown stt provider "whisper"`, "4:5 : syntax error"},
			wantYAML: []string{"4:1 : syntax error"},
		},
		{
			name: "durations and values",
			toml: `prompt = "  "
name = "my agent"
[stt]
provider = "deepgram"
url = "https://example.net/listen"
[llm]
provider = "rules"
first_token = "soon"
[tts]
provider = "flite"
voice = "sltt"
[fillers]
after = "off"
phrases = ["", "ok"]
[transports.webrtc]
stun = ["turn:x"]
`,
			yaml: `prompt: "  "
name: my agent
stt:
  provider: deepgram
  url: https://example.net/listen
llm:
  provider: rules
  first_token: soon
tts:
  provider: flite
  voice: sltt
fillers:
  after: "off"
  phrases: ["", ok]
transports:
  webrtc:
    stun: ["turn:x"]
`,
			wantTOML: []string{
				"1:10 prompt: is empty",
				"2:8 name: want 1 to 64 letters",
				"5:7 stt.url: want a ws or wss URL",
				`8:15 llm.first_token: "soon" is not a duration`,
				`11:9 tts.voice: "sltt" is not one of awb, kal, kal16, rms, slt`,
				"14:12 fillers.phrases[0]: is empty",
				`16:9 transports.webrtc.stun[0]: "turn:x" is not a stun: URL`,
			},
			wantYAML: []string{
				"1:9 prompt: is empty",
				"2:7 name: want 1 to 64 letters",
				"5:8 stt.url: want a ws or wss URL",
				`8:16 llm.first_token: "soon" is not a duration`,
				`11:10 tts.voice: "sltt" is not one of awb, kal, kal16, rms, slt`,
				"14:13 fillers.phrases[0]: is empty",
				`17:12 transports.webrtc.stun[0]: "turn:x" is not a stun: URL`,
			},
		},
	}
	for _, c := range cases {
		for _, f := range []struct {
			format Format
			src    string
			want   []string
			hint   string
		}{{TOML, c.toml, c.wantTOML, c.hint}, {YAML, c.yaml, c.wantYAML, cmp.Or(c.hintYAML, c.hint)}} {
			t.Run(c.name+"/"+f.format.String(), func(t *testing.T) {
				_, ds := Parse("agent."+f.format.String(), []byte(f.src), f.format, Options{LookupEnv: envWith("K", "DEEPGRAM_API_KEY"), KnownTools: catalogue})
				if strings.HasPrefix(c.name, "key variables") {
					_, ds = Parse("agent."+f.format.String(), []byte(f.src), f.format, Options{LookupEnv: envWith(), KnownTools: catalogue})
				}
				ds.Sort()
				if have := got(ds); !match(have, f.want) {
					t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(have, "\n  "), strings.Join(f.want, "\n  "))
				}
				if f.hint != "" && len(ds) > 0 && !strings.Contains(ds[0].Hint, f.hint) {
					t.Errorf("hint %q, want it to contain %q", ds[0].Hint, f.hint)
				}
			})
		}
	}
}

// TestFnum: bounds print as written in a file.
// Mutation caught: 'g' formatting of whole numbers ("6.7108864e+07").
func TestFnum(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{67108864, "67108864"}, {0.35, "0.35"}, {-1, "-1"}, {2, "2"}, {1e300, "1e+300"}} {
		if got := fnum(c.f); got != c.want {
			t.Errorf("fnum(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}
