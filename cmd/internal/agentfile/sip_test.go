package agentfile

import (
	"strings"
	"testing"
	"time"
)

// sipBase is a valid agent with only the SIP transport; the cases append
// to its [transports.sip] table.
const sipBase = `prompt = "p"
[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.sip]
`

// TestSIPDiagnostics: every check of [transports.sip] and [dtmf] reports
// at the value's line:column, and a valid table is quiet.
// Mutations caught (each seen failing): the allowlist made optional (an
// open trunk by omission), an address check dropped, the 8 kHz refusal
// for pocketsphinx removed, the auth pair check dropped.
func TestSIPDiagnostics(t *testing.T) {
	cases := []struct {
		name string
		sip  string
		tail string
		env  []string
		want []string
		hint string
	}{
		{name: "valid", sip: `udp = "127.0.0.1:5060"
tcp = "127.0.0.1:5060"
allow = ["127.0.0.0/8", "::1/128"]
codecs = ["g722", "opus"]
`},
		{name: "8 kHz codecs with pocketsphinx", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
codecs = ["G722", "PCMU"]
`, want: []string{"11:11 transports.sip.codecs: pocketsphinx cannot serve PCMU (8 kHz phone audio)"}, hint: "488"},
		{name: "default codecs with pocketsphinx", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
#
`, want: []string{"8:13 transports.sip.codecs: pocketsphinx cannot serve PCMU and PCMA"}},
		{name: "no listen address", sip: `allow = ["127.0.0.0/8"]
`, want: []string{"8:13 transports.sip: no listen address"}},
		{name: "no allowlist", sip: `udp = "127.0.0.1:5060"
`, want: []string{"8:13 transports.sip.allow: no allowed sources"}, hint: "0.0.0.0/0"},
		{name: "bad address", sip: `udp = "localhost:5060"
allow = ["127.0.0.0/8"]
`, want: []string{"9:7 transports.sip.udp: \"localhost:5060\" is not an IP address and port"}},
		{name: "address not prefix", sip: `udp = "127.0.0.1:5060"
allow = ["10.0.0.1"]
`, want: []string{"10:10 transports.sip.allow[0]: \"10.0.0.1\" is an address"}, hint: "/32"},
		{name: "unknown codec", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
codecs = ["G729"]
`, want: []string{"11:11 transports.sip.codecs[0]: \"G729\" is not one of"}},
		{name: "8 kHz pocketsphinx", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
rate = 8000
`, want: []string{"11:8 transports.sip.rate: pocketsphinx hears 16 kHz audio only"}},
		{name: "ports reversed", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
rtp_port_min = 30000
rtp_port_max = 20000
`, want: []string{"12:16 transports.sip.rtp_port_max: 20000 is not above rtp_port_min 30000"}},
		{name: "auth without password", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
auth_user = "trunk"
`, want: []string{"11:13 transports.sip: digest authentication needs both"}},
		{name: "auth password unset", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
auth_user = "trunk"
auth_password_env = "SIP_PASS"
`, want: []string{"12:21 transports.sip.auth_password_env: SIP_PASS is not set"}},
		{name: "auth password set", env: []string{"SIP_PASS"}, sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
auth_user = "trunk"
auth_password_env = "SIP_PASS"
`},
		{name: "tls without cert", sip: `tls = "127.0.0.1:5061"
allow = ["127.0.0.0/8"]
`, want: []string{"9:7 transports.sip.tls: TLS needs a certificate"}},
		{name: "ptime off grid", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
ptime = "25ms"
`, want: []string{"11:9 transports.sip.ptime: 25ms is not a multiple of 10ms"}},
		{name: "unknown key", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
media_timout = "10s"
`, want: []string{"11:1 transports.sip.media_timout: unknown key"}, hint: "media_timeout"},
		{name: "dtmf", sip: `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
`, tail: `[dtmf]
mode = "press"
terminator = "0"
`, want: []string{"13:8 dtmf.mode: \"press\" is not one of", "14:14 dtmf.terminator: \"0\" is not one of"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := sipBase + c.sip
			if !strings.Contains(c.sip, "codecs") && !strings.Contains(c.sip, "#") {
				src += "codecs = [\"opus\", \"G722\"]\n" // pocketsphinx hears no G.711
			}
			src += c.tail
			f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith(c.env...)})
			ds.Sort()
			if have := got(ds); !match(have, c.want) {
				t.Fatalf("diagnostics:\n%s\nwant prefixes:\n%s", strings.Join(have, "\n"), strings.Join(c.want, "\n"))
			}
			if c.hint != "" && !strings.Contains(ds[0].Hint, c.hint) {
				t.Errorf("hint %q does not mention %q", ds[0].Hint, c.hint)
			}
			if f == nil || !f.Transports.SIP.Enabled.V {
				t.Fatal("the SIP transport is not enabled")
			}
		})
	}
}

// TestSIPDefaults: the values a minimal table gets, and the codec names
// normalised to SDP's spelling.
func TestSIPDefaults(t *testing.T) {
	src := sipBase + "udp = \"127.0.0.1:5060\"\nallow = [\"127.0.0.0/8\"]\ncodecs = [\"OPUS\", \"g722\"]\n"
	f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith()})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	s := f.Transports.SIP
	if s.Rate.V != 16000 || s.Ptime.V != 20*time.Millisecond || s.MediaTimeout.V != 30*time.Second ||
		s.Ringing.V != "180" || s.RTPPortMin.V != 10000 || s.RTPPortMax.V != 20000 || s.MinSE.V != 90*time.Second {
		t.Errorf("defaults: %+v", s)
	}
	if len(s.Codecs) != 2 || s.Codecs[0].V != "opus" || s.Codecs[1].V != "G722" {
		t.Errorf("codecs: %+v", s.Codecs)
	}
	if l := s.Listens(); len(l) != 1 || l["udp"] != "127.0.0.1:5060" {
		t.Errorf("listens: %v", l)
	}
	if f.DTMF.Mode.V != "collect" || f.DTMF.MaxDigits.V != 32 {
		t.Errorf("dtmf defaults: %+v", f.DTMF)
	}
}
