package agentbuild

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
)

// env is a fake environment.
type env map[string]string

func (e env) lookup(name string) (string, bool) { v, ok := e[name]; return v, ok }

// secret32 is a secret of the shortest length accepted.
const secret32 = "0123456789abcdef0123456789abcdef"

// keysSet is an environment with the example keys and the secrets the
// test files name.
func keysSet() env {
	return env{
		"OPENAI_API_KEY": "sk-not-real", "DEEPGRAM_API_KEY": "dg-not-real", "BRISVOX_SIP_PASSWORD": "pw",
		"BRISVOX_PCM_TOKEN": secret32, "BRISVOX_PCM_SECRET": secret32,
		"BRISVOX_WEBRTC_TOKEN": secret32, "TWILIO_AUTH_TOKEN": secret32,
	}
}

// wantDiag is one expected diagnostic: where, and parts of its message
// and hint.
type wantDiag struct {
	line int
	path string
	msg  string // a part of the message
	hint string // the whole hint ("": not checked)
}

// TestExposure runs the exposure rule over the agent files of
// testdata/exposure: an endpoint without authentication is refused for
// an agent that spends keys, and for a keyless one only off loopback;
// public = true and a configured authentication let it open; a secret
// shorter than MinSecretLen, and Twilio's implied auth token unset, are
// reported. Mutations seen failing: the loopback exception applied to a
// key-spending agent; an allowlist with 0.0.0.0/0 among others taken for
// authentication; the implied api_key_env not counted; a YAML file's hint
// in TOML syntax; the length check dropped; public ignored; Twilio's
// unset implied token taken for a guard.
func TestExposure(t *testing.T) {
	const sipHintTOML = `set allow = ["203.0.113.0/24"] (your carrier's addresses), or auth_user = "trunk" with auth_password_env = "BRISVOX_SIP_PASSWORD", or public = true in [transports.sip]`
	const pcmHintTOML = `set token_env = "BRISVOX_PCM_TOKEN", or signing_secret_env = "BRISVOX_PCM_SIGNING_SECRET", or public = true in [transports.pcm]`
	loop, open := "127.0.0.1:8080", "0.0.0.0:8080"
	sipLoop := []string{"127.0.0.1:5060"}
	short := keysSet()
	short["BRISVOX_PCM_TOKEN"], short["TWILIO_AUTH_TOKEN"] = secret32[:31], secret32[:20]
	noTwilio := keysSet()
	delete(noTwilio, "TWILIO_AUTH_TOKEN")
	cases := []struct {
		file     string
		httpAddr string
		sipAddrs []string
		env      env
		want     []wantDiag
	}{
		{"sip-keyless.toml", loop, sipLoop, keysSet(), nil},
		{"sip-keyless.toml", loop, []string{"localhost:5060", "[::1]:5060"}, keysSet(), nil},
		{"sip-keyless.toml", loop, []string{"127.0.0.1:5060", "0.0.0.0:5060"}, keysSet(), []wantDiag{
			{8, "transports.sip", "any client may use the SIP trunk: it listens beyond loopback (127.0.0.1:5060, 0.0.0.0:5060)", sipHintTOML},
		}},
		{"sip-keyless.toml", loop, []string{":5060"}, keysSet(), []wantDiag{{8, "transports.sip", "beyond loopback", ""}}},
		{"sip-keys-anyone.toml", loop, sipLoop, keysSet(), []wantDiag{
			{9, "transports.sip", "any client may use the SIP trunk: the agent spends the keys of llm openai (OPENAI_API_KEY)", sipHintTOML},
		}},
		{"sip-keys-anyone-among.toml", loop, sipLoop, keysSet(), []wantDiag{{9, "transports.sip", "spends the keys", ""}}},
		{"sip-keys-allowlist.toml", loop, []string{"0.0.0.0:5060"}, keysSet(), nil},
		{"sip-keys-digest.toml", loop, []string{"0.0.0.0:5060"}, keysSet(), nil},
		{"sip-keys-anyone.yaml", loop, sipLoop, keysSet(), []wantDiag{
			{10, "transports.sip", "spends the keys of llm openai (OPENAI_API_KEY)",
				`set allow: [203.0.113.0/24] (your carrier's addresses), or auth_user: trunk with auth_password_env: BRISVOX_SIP_PASSWORD, or public: true under transports: sip:`},
		}},
		{"pcm-keyless.toml", loop, nil, keysSet(), nil},
		{"pcm-keyless.toml", open, nil, keysSet(), []wantDiag{
			{8, "transports.pcm", "any client may use the PCM websocket /pcm: it listens beyond loopback (0.0.0.0:8080)", pcmHintTOML},
		}},
		{"pcm-keys.toml", loop, nil, keysSet(), []wantDiag{
			{9, "transports.pcm", "any client may use the PCM websocket /pcm: the agent spends the keys of llm openai (OPENAI_API_KEY)", pcmHintTOML},
		}},
		{"pcm-keys-token.toml", open, nil, keysSet(), nil},
		{"pcm-keys-token.toml", open, nil, short, []wantDiag{
			{11, "transports.pcm.token_env", "BRISVOX_PCM_TOKEN holds 31 characters: too short to guard the PCM websocket /pcm", ""},
		}},
		{"pcm-keys-signed.toml", open, nil, keysSet(), nil},
		{"pcm-keys-public.toml", open, nil, keysSet(), nil},
		{"webrtc-keys.yaml", loop, nil, keysSet(), []wantDiag{
			{10, "transports.webrtc", "any client may use the WebRTC page and /offer: the agent spends the keys",
				"set token_env: BRISVOX_WEBRTC_TOKEN, or signing_secret_env: BRISVOX_WEBRTC_SIGNING_SECRET, or public: true under transports: webrtc:"},
		}},
		{"twilio-keys.toml", loop, nil, keysSet(), nil},
		{"twilio-keys.toml", loop, nil, noTwilio, []wantDiag{
			{9, "transports.twilio", "TWILIO_AUTH_TOKEN is not set, so any client may use the Twilio stream /twilio: the agent spends the keys of stt deepgram (DEEPGRAM_API_KEY), llm openai (OPENAI_API_KEY)",
				`export TWILIO_AUTH_TOKEN=... (never written in the file), or public = true in [transports.twilio]`},
		}},
		{"twilio-keys.toml", loop, nil, short, []wantDiag{
			{10, "transports.twilio.auth_token_env", "TWILIO_AUTH_TOKEN holds 20 characters: too short", ""},
		}},
		{"all-keys.toml", loop, sipLoop, noTwilio, []wantDiag{
			{9, "transports.webrtc", "any client may use the WebRTC page and /offer", ""},
			{11, "transports.pcm", "any client may use the PCM websocket /pcm", ""},
			{13, "transports.twilio", "TWILIO_AUTH_TOKEN is not set", ""},
			{15, "transports.sip", "any client may use the SIP trunk", ""},
		}},
	}
	for _, c := range cases {
		t.Run(c.file+" "+c.httpAddr+" "+strings.Join(c.sipAddrs, ","), func(t *testing.T) {
			f, ds := agentfile.Load(filepath.Join("testdata", "exposure", c.file), agentfile.Options{LookupEnv: c.env.lookup, KnownTools: ToolNames()})
			if len(ds) > 0 {
				t.Fatalf("the file itself: %s", ds)
			}
			got := Exposure(f, c.httpAddr, c.sipAddrs, c.env.lookup)
			if len(got) != len(c.want) {
				t.Fatalf("diagnostics:\n%s\nwant %d", agentfile.Diagnostics(got), len(c.want))
			}
			for i, w := range c.want {
				d := got[i]
				if d.Line != w.line || d.Col == 0 || d.Path != w.path || !strings.Contains(d.Msg, w.msg) || (w.hint != "" && d.Hint != w.hint) {
					t.Errorf("diagnostic %s\n want line %d %s: ...%s... (hint: %s)", d, w.line, w.path, w.msg, w.hint)
				}
				if f.Format == agentfile.YAML && strings.Contains(d.Hint, " = ") || f.Format == agentfile.TOML && strings.Contains(d.Hint, ": ") {
					t.Errorf("hint not in the file's syntax: %s", d.Hint)
				}
			}
		})
	}
}

// TestAllLoopback: loopback is 127/8, ::1 and localhost; an empty host
// or any other address is not.
func TestAllLoopback(t *testing.T) {
	cases := []struct {
		addrs []string
		want  bool
	}{
		{[]string{"127.0.0.1:8080"}, true},
		{[]string{"127.0.0.5:8080", "[::1]:80", "localhost:1"}, true},
		{[]string{":8080"}, false},
		{[]string{"0.0.0.0:8080"}, false},
		{[]string{"[::]:8080"}, false},
		{[]string{"127.0.0.1:1", "192.168.1.2:1"}, false},
		{[]string{"example.com:80"}, false},
		{nil, true},
	}
	for _, c := range cases {
		if got := allLoopback(c.addrs); got != c.want {
			t.Errorf("allLoopback(%q) = %v, want %v", c.addrs, got, c.want)
		}
	}
}
