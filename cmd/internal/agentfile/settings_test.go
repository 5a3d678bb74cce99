package agentfile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/admit"
)

// base is a small clean agent that the settings tests add to.
const base = `prompt = "p"
[stt]
provider = "deepgram"
[llm]
provider = "openai"
model = "m"
[tts]
provider = "flite"
`

// TestSettingDefaults: the settings of issue 14 left out take their
// defaults, not Set, and the warm-up mode is the provider's first.
// Mutation caught: a default marked Set (serve would think the file asked
// for it), the twilio token variable not implied, warm defaulting to
// "models" for a websocket provider, gc_percent applied without Set.
func TestSettingDefaults(t *testing.T) {
	src := base + "[transports.webrtc]\n[transports.pcm]\n[transports.twilio]\n"
	f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY")})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	tr := f.Transports
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"webrtc not public", !tr.WebRTC.Public.V && !tr.WebRTC.Public.Set && !tr.WebRTC.Guarded()},
		{"pcm not public", !tr.PCM.Public.V && !tr.PCM.Public.Set && tr.PCM.TokenEnv.V == "" && len(tr.PCM.AllowedOrigins) == 0},
		{"twilio token implied", tr.Twilio.AuthTokenEnv.V == "TWILIO_AUTH_TOKEN" && !tr.Twilio.AuthTokenEnv.Set && tr.Twilio.AuthTokenEnv.Pos == Pos{11, 13}},
		{"twilio public url", tr.Twilio.PublicURL.V == "" && !tr.Twilio.PublicURL.Set},
		{"sip not public", !tr.SIP.Public.V && !tr.SIP.Public.Set},
		{"serve rate", f.Serve.RateLimit.V == 5 && !f.Serve.RateLimit.Set && f.Serve.Burst.V == 20 && !f.Serve.Burst.Set},
		{"serve capacity", !f.Serve.OverCapacity.V && !f.Serve.OverCapacity.Set},
		{"serve memory", f.Serve.MemoryLimit.V == 0 && !f.Serve.MemoryLimit.Set},
		{"serve gc", f.Serve.GCPercent.V == 100 && !f.Serve.GCPercent.Set},
		{"serve admission", f.Serve.Admission.V == "fixed" && !f.Serve.Admission.Set && f.Serve.CPUCeiling.V == admit.DefaultCeiling && !f.Serve.CPUCeiling.Set},
		{"stt warm connect", f.STTWarm.Mode.V == "connect" && !f.STTWarm.Mode.Set && !f.STTWarm.Required.V && !f.STTWarm.Required.Set},
		{"llm warm models", f.LLMWarm.Mode.V == "models" && !f.LLMWarm.Mode.Set && f.LLMWarm.Mode.Pos == Pos{5, 12}},
		{"tts warm load", f.TTSWarm.Mode.V == "load" && !f.TTSWarm.Mode.Set},
	} {
		if !c.ok {
			t.Errorf("%s: %+v %+v %+v", c.name, tr, f.Serve, []Warm{f.STTWarm, f.LLMWarm, f.TTSWarm})
		}
	}
	// A public twilio stream implies no token variable.
	f, ds = Parse("a.toml", []byte(base+"[transports.twilio]\npublic = true\n"), TOML, Options{LookupEnv: envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY")})
	if len(ds) > 0 || f.Transports.Twilio.AuthTokenEnv.V != "" || !f.Transports.Twilio.Public.V {
		t.Errorf("public twilio: %+v %s", f.Transports.Twilio, ds)
	}
}

// TestSettingValues: the settings written in both formats decode to the
// same values, at their positions.
// Mutation caught: origins not lower-cased, a size's unit read as
// decimal for binary, warm_required read from the wrong stage, a YAML
// value decoded differently from its TOML twin.
func TestSettingValues(t *testing.T) {
	toml := base + `warm = "none"
[transports.webrtc]
public = true
[transports.pcm]
token_env = "PCM_TOKEN"
signing_secret_env = "PCM_SECRET"
allowed_origins = ["https://App.example.com", "http://localhost:8080", "https://[::1]:8443"]
[transports.twilio]
auth_token_env = "MY_TWILIO"
public_url = "wss://voice.example.com/twilio"
[transports.sip]
public = true
udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
codecs = ["opus"]
[serve]
rate_limit = 2.5
burst = 7
over_capacity = true
memory_limit = "1536MiB"
gc_percent = 400
admission = "measured"
cpu_ceiling = 0.6
`
	toml = strings.Replace(toml, "[llm]\nprovider = \"openai\"\nmodel = \"m\"\n", "[llm]\nprovider = \"openai\"\nmodel = \"m\"\nwarm = \"request\"\nwarm_required = true\n", 1)
	yaml := `prompt: p
stt: {provider: deepgram}
llm: {provider: openai, model: m, warm: request, warm_required: true}
tts: {provider: flite, warm: none}
transports:
  webrtc: {public: true}
  pcm:
    token_env: PCM_TOKEN
    signing_secret_env: PCM_SECRET
    allowed_origins: [https://App.example.com, "http://localhost:8080", "https://[::1]:8443"]
  twilio: {auth_token_env: MY_TWILIO, public_url: "wss://voice.example.com/twilio"}
  sip: {public: true, udp: "127.0.0.1:5060", allow: [127.0.0.0/8], codecs: [opus]}
serve: {rate_limit: 2.5, burst: 7, over_capacity: true, memory_limit: 1536MiB, gc_percent: 400, admission: measured, cpu_ceiling: 0.6}
`
	env := envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY", "PCM_TOKEN", "PCM_SECRET", "MY_TWILIO")
	for _, c := range []struct {
		format Format
		src    string
	}{{TOML, toml}, {YAML, yaml}} {
		t.Run(c.format.String(), func(t *testing.T) {
			f, ds := Parse("a", []byte(c.src), c.format, Options{LookupEnv: env})
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			tr, s := f.Transports, f.Serve
			origins := make([]string, len(tr.PCM.AllowedOrigins))
			for i, o := range tr.PCM.AllowedOrigins {
				origins[i] = o.V
			}
			for _, k := range []struct {
				name string
				ok   bool
			}{
				{"webrtc public", tr.WebRTC.Public.V && tr.WebRTC.Public.Set},
				{"pcm token", tr.PCM.TokenEnv.V == "PCM_TOKEN" && tr.PCM.TokenEnv.Set && tr.PCM.SigningSecretEnv.V == "PCM_SECRET" && tr.PCM.Guarded()},
				{"pcm origins", strings.Join(origins, " ") == "https://app.example.com http://localhost:8080 https://[::1]:8443"},
				{"twilio", tr.Twilio.AuthTokenEnv.V == "MY_TWILIO" && tr.Twilio.AuthTokenEnv.Set && tr.Twilio.PublicURL.V == "wss://voice.example.com/twilio"},
				{"sip public", tr.SIP.Public.V && tr.SIP.Public.Set},
				{"serve", s.RateLimit.V == 2.5 && s.Burst.V == 7 && s.OverCapacity.V && s.MemoryLimit.V == 1536<<20 && s.MemoryLimit.Set && s.GCPercent.V == 400 && s.GCPercent.Set},
				{"serve admission", s.Admission.V == "measured" && s.Admission.Set && s.CPUCeiling.V == 0.6 && s.CPUCeiling.Set},
				{"llm warm", f.LLMWarm.Mode.V == "request" && f.LLMWarm.Mode.Set && f.LLMWarm.Required.V},
				{"tts warm", f.TTSWarm.Mode.V == "none" && f.TTSWarm.Mode.Set && !f.TTSWarm.Required.V},
				{"stt warm", f.STTWarm.Mode.V == "connect" && !f.STTWarm.Mode.Set},
			} {
				if !k.ok {
					t.Errorf("%s: %+v %+v %+v", k.name, tr, s, []Warm{f.STTWarm, f.LLMWarm, f.TTSWarm})
				}
			}
			if _, ok := f.LLM.Options["warm"]; ok {
				t.Error("warm taken for a provider option")
			}
		})
	}
}

// TestSettingDiagnostics: each bad value of the new settings is reported
// at its position, with a hint in the file's syntax.
// Mutation caught: "*" accepted as an origin, an origin with a path
// accepted, a size without a unit accepted, a warm mode of another
// provider accepted, a token variable not looked up, public and a token
// together let through, cpu_ceiling's (0, 1] check dropped.
func TestSettingDiagnostics(t *testing.T) {
	cases := []struct {
		name, add, want, hint string
	}{
		{"origin star", "[transports.pcm]\nallowed_origins = [\"*\"]\n", `10:20 transports.pcm.allowed_origins[0]: "*" would let any web page`, "public = true"},
		{"origin path", "[transports.webrtc]\nallowed_origins = [\"https://a.example/x\"]\n", `10:20 transports.webrtc.allowed_origins[0]: "https://a.example/x" has a path`, `allowed_origins = ["https://a.example"]`},
		{"origin scheme", "[transports.pcm]\nallowed_origins = [\"ftp://a.example\"]\n", "10:20 transports.pcm.allowed_origins[0]: \"ftp://a.example\" is not an http or https origin", "allowed_origins = ["},
		{"origin port", "[transports.pcm]\nallowed_origins = [\"http://a.example:99999\"]\n", "10:20 transports.pcm.allowed_origins[0]: \"http://a.example:99999\" has a bad port", "1..65535"},
		{"token unset", "[transports.pcm]\ntoken_env = \"NOPE\"\n", "10:13 transports.pcm.token_env: NOPE is not set", "export NOPE=..."},
		{"token literal", "[transports.webrtc]\ntoken_env = \"sk-abcdefabcdefabcdef\"\n", "10:13 transports.webrtc.token_env: holds what looks like a secret", `token_env = "BRISVOX_WEBRTC_TOKEN"`},
		{"public and token", "[transports.pcm]\npublic = true\ntoken_env = \"T\"\n", "10:10 transports.pcm.public: public and a token", "remove public = true"},
		{"twilio public and token", "[transports.twilio]\npublic = true\nauth_token_env = \"T\"\n", "10:10 transports.twilio.public: public and auth_token_env", "remove public = true"},
		{"twilio url", "[transports.twilio]\npublic_url = \"http://a.example/twilio\"\n", "10:14 transports.twilio.public_url: want a wss:// or https:// URL", `public_url = "wss://`},
		{"rate zero", "[transports.webrtc]\n[serve]\nrate_limit = 0\n", "11:14 serve.rate_limit: 0 is out of range: want more than 0", "rate_limit = 5"},
		{"burst zero", "[transports.webrtc]\n[serve]\nburst = 0\n", "11:9 serve.burst: 0 is out of range 1..1000000", "burst = 1"},
		{"size no unit", "[transports.webrtc]\n[serve]\nmemory_limit = 512\n", "11:16 serve.memory_limit: a size needs a unit", `memory_limit = "512MiB"`},
		{"size fraction", "[transports.webrtc]\n[serve]\nmemory_limit = \"1.5GiB\"\n", `11:16 serve.memory_limit: "1.5GiB" is not a size: a whole number`, `memory_limit = "512MiB"`},
		{"size small", "[transports.webrtc]\n[serve]\nmemory_limit = \"1MiB\"\n", "11:16 serve.memory_limit: 1048576 bytes is out of range", "memory_limit = "},
		{"gc low", "[transports.webrtc]\n[serve]\ngc_percent = 5\n", "11:14 serve.gc_percent: 5 is under 10", "gc_percent = -1"},
		{"gc high", "[transports.webrtc]\n[serve]\ngc_percent = 5000\n", "11:14 serve.gc_percent: 5000 is out of range -1..1000", "gc_percent = 1000"},
		{"admission mode", "[transports.webrtc]\n[serve]\nadmission = \"measure\"\n", `11:13 serve.admission: "measure" is not one of fixed, measured`, `did you mean "measured"`},
		{"ceiling over 1", "[transports.webrtc]\n[serve]\ncpu_ceiling = 1.5\n", "11:15 serve.cpu_ceiling: 1.5 is out of range: want a share of the cores", "cpu_ceiling = 0.75"},
		{"ceiling 0", "[transports.webrtc]\n[serve]\ncpu_ceiling = 0\n", "11:15 serve.cpu_ceiling: 0 is out of range", "75% of the cores"},
		{"ceiling percent", "[transports.webrtc]\n[serve]\ncpu_ceiling = \"75%\"\n", "11:15 serve.cpu_ceiling: want a number, got a string", "cpu_ceiling = 0.75"},
		{"serve unknown", "[transports.webrtc]\n[serve]\nbursts = 1\n", `11:1 serve.bursts: unknown key "bursts"`, `did you mean "burst"`},
		{"warm of another provider", "[transports.webrtc]\n[tts]\n", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == "" {
				return
			}
			_, ds := Parse("a.toml", []byte(base+c.add), TOML, Options{LookupEnv: envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY", "T")})
			ds.Sort()
			have := got(ds)
			if len(have) != 1 || !strings.HasPrefix(have[0], c.want) {
				t.Fatalf("got:\n  %s\nwant:\n  %s", strings.Join(have, "\n  "), c.want)
			}
			if !strings.Contains(ds[0].Hint, c.hint) {
				t.Errorf("hint %q, want it to contain %q", ds[0].Hint, c.hint)
			}
		})
	}
	warm := []struct {
		name, src, want, hint string
	}{
		{"llm connect", "[llm]\nprovider = \"openai\"\nmodel = \"m\"\nwarm = \"connect\"\n", `4:8 llm.warm: "connect" is not a warm-up of openai (it offers models, request, none)`, `warm = "models" (openai's default), or warm = "none"`},
		{"stt request", "[stt]\nprovider = \"deepgram\"\nwarm = \"request\"\n", `3:8 stt.warm: "request" is not a warm-up of deepgram (it offers connect, none)`, `warm = "connect"`},
		{"rules", "[llm]\nprovider = \"rules\"\nwarm = \"load\"\n", `3:8 llm.warm: "load" is not a warm-up of rules (it offers none)`, `warm = "none" (rules's default)`},
		{"type", "[tts]\nprovider = \"flite\"\nwarm = true\n", "3:8 tts.warm: want a string, got a boolean", `warm = "none"`},
		{"required none", "[tts]\nprovider = \"flite\"\nwarm = \"none\"\nwarm_required = true\n", "4:17 tts.warm_required: warm_required with no warm-up", `warm = "load"`},
	}
	for _, c := range warm {
		t.Run(c.name, func(t *testing.T) {
			_, ds := Parse("a.toml", []byte(c.src), TOML, Options{LookupEnv: envWith("DEEPGRAM_API_KEY", "OPENAI_API_KEY")})
			var hit *Diagnostic
			for i, d := range ds {
				if strings.HasSuffix(d.Path, ".warm") || strings.HasSuffix(d.Path, ".warm_required") {
					if hit != nil {
						t.Fatalf("two: %s", ds)
					}
					hit = &ds[i]
				}
			}
			if hit == nil {
				t.Fatalf("no warm diagnostic: %s", ds)
			}
			if h := got(Diagnostics{*hit})[0]; !strings.HasPrefix(h, c.want) || !strings.Contains(hit.Hint, c.hint) {
				t.Errorf("got %s (hint %q)\nwant %s (hint with %q)", h, hit.Hint, c.want, c.hint)
			}
		})
	}
}

// TestParseSize pins the units of a size.
// Mutation caught: KB read as KiB, an overflow wrapping to a small
// number, a fraction truncated.
func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"512MiB", 512 << 20, true}, {"2GiB", 2 << 30, true}, {"1500MB", 1500e6, true}, {"2 gib", 2 << 30, true},
		{"100", 100, true}, {"1KB", 1000, true}, {"1kib", 1024, true}, {"3TiB", 3 << 40, true},
		{"1.5GiB", 0, false}, {"GiB", 0, false}, {"", 0, false}, {"12XB", 0, false}, {"-1MiB", 0, false},
		{"99999999999999TiB", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := ParseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, ErrSize) {
			t.Errorf("ParseSize(%q): %v does not wrap ErrSize", c.in, err)
		}
	}
	_ = time.Second
}

// TestGCOff: gc_percent = -1 needs a memory limit, from the file or
// GOMEMLIMIT.
// Mutation caught: the check ignoring memory_limit or the environment
// (a file refused though bounded), or dropped (the heap unbounded).
func TestGCOff(t *testing.T) {
	for _, c := range []struct {
		name, add string
		env       []string
		refused   bool
	}{
		{"alone", "gc_percent = -1\n", nil, true},
		{"with a limit", "gc_percent = -1\nmemory_limit = \"1GiB\"\n", nil, false},
		{"with GOMEMLIMIT", "gc_percent = -1\n", []string{"GOMEMLIMIT"}, false},
		{"on", "gc_percent = 50\n", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := envWith(append([]string{"DEEPGRAM_API_KEY", "OPENAI_API_KEY"}, c.env...)...)
			_, ds := Parse("a.toml", []byte(base+"[transports.webrtc]\n[serve]\n"+c.add), TOML, Options{LookupEnv: env})
			if refused := len(ds) > 0; refused != c.refused {
				t.Errorf("refused=%v, want %v: %s", refused, c.refused, ds)
			}
		})
	}
}
