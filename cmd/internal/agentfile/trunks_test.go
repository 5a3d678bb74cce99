package agentfile

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// trunkBase is a valid SIP agent (lines 1-11); the cases append trunk
// tables from line 12.
const trunkBase = sipBase + `udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
codecs = ["opus", "G722"]
`

// TestTrunkDiagnostics: every check of [transports.sip.trunks.NAME] is
// reported at the value's line:column, and a valid trunk is quiet.
// Mutations caught (each seen failing): the CR/LF refusal of oneLine
// dropped (a header injection through from), the auth pair check
// dropped, register accepted without auth_user, the address check
// dropped.
func TestTrunkDiagnostics(t *testing.T) {
	cases := []struct {
		name  string
		trunk string
		env   []string
		want  []string
		hint  string
	}{
		{name: "valid", env: []string{"CARRIER_PASSWORD"}, trunk: `[transports.sip.trunks.carrier]
address = "sip:carrier.example:5061;transport=tls"
transport = "tls"
outbound_proxy = "sip:proxy.carrier.example;lr"
routes = ["sip:edge.carrier.example;lr"]
auth_user = "brisvox"
auth_password_env = "CARRIER_PASSWORD"
from = "+33123456789"
max_calls = 10
calls_per_second = 2.5
early_media = true
dtmf = "rfc4733"
transfer = "bridge"
register = true
register_expires = "30m"
`},
		{name: "missing address", trunk: "[transports.sip.trunks.carrier]\nmax_calls = 3\n",
			want: []string{"12:24 transports.sip.trunks.carrier.address: missing"}},
		{name: "bad address", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example:99999\"\n",
			want: []string{"13:11 transports.sip.trunks.carrier.address: address has a bad port"}},
		{name: "address with a path", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example/x\"\n",
			want: []string{"13:11 transports.sip.trunks.carrier.address: address is not host[:port]"}},
		{name: "bad name", trunk: "[transports.sip.trunks.\"my carrier\"]\naddress = \"carrier.example\"\n",
			want: []string{"12:24 transports.sip.trunks.my carrier: \"my carrier\" is not a trunk name"}},
		{name: "not a table", trunk: "[transports.sip.trunks]\ncarrier = \"carrier.example\"\n",
			want: []string{"13:11 transports.sip.trunks.carrier: want a table, got a string"}},
		{name: "unknown key", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nmax_call = 3\n",
			want: []string{"14:1 transports.sip.trunks.carrier.max_call: unknown key \"max_call\" of a trunk"}, hint: "max_calls"},
		{name: "wrong type", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nmax_calls = \"3\"\nearly_media = \"yes\"\n",
			want: []string{"14:13 transports.sip.trunks.carrier.max_calls: want an integer, got a string",
				"15:15 transports.sip.trunks.carrier.early_media: want true or false"}},
		{name: "enums", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\ntransport = \"sctp\"\ndtmf = \"inband\"\ntransfer = \"attended\"\n",
			want: []string{"14:13 transports.sip.trunks.carrier.transport: \"sctp\" is not one of",
				"15:8 transports.sip.trunks.carrier.dtmf: \"inband\" is not one of",
				"16:12 transports.sip.trunks.carrier.transfer: \"attended\" is not one of"}},
		{name: "CR LF in from", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nfrom = \"+331\\r\\nX-Evil: 1\"\n",
			want: []string{"14:8 transports.sip.trunks.carrier.from: holds CR, LF or NUL (the value is not shown)"}},
		{name: "NUL in auth_user", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nauth_user = \"a\\u0000b\"\n",
			want: []string{"14:13 transports.sip.trunks.carrier.auth_user: holds CR, LF or NUL"}},
		{name: "bad from", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nfrom = \"+33 1 23\"\n",
			want: []string{"14:8 transports.sip.trunks.carrier.from: from is neither a number nor a sip: URI"}},
		{name: "bad proxy and route", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\noutbound_proxy = \"proxy.example\"\nroutes = [\"edge.example\"]\n",
			want: []string{"14:18 transports.sip.trunks.carrier.outbound_proxy: \"proxy.example\" is not a sip: or sips: URI",
				"15:11 transports.sip.trunks.carrier.routes[0]: \"edge.example\" is not a sip: or sips: URI"}},
		{name: "auth without password", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nauth_user = \"brisvox\"\n",
			want: []string{"14:13 transports.sip.trunks.carrier: digest authentication needs both"}},
		{name: "password variable unset", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nauth_user = \"brisvox\"\nauth_password_env = \"CARRIER_PASSWORD\"\n",
			want: []string{"15:21 transports.sip.trunks.carrier.auth_password_env: CARRIER_PASSWORD is not set"}},
		{name: "password in the file", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nauth_user = \"brisvox\"\nauth_password_env = \"hunter2hunter2hunter2x\"\n",
			want: []string{"14:13 transports.sip.trunks.carrier: digest authentication needs both",
				"15:21 transports.sip.trunks.carrier.auth_password_env: holds what looks like a secret"}},
		{name: "register without auth_user", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nregister = true\n",
			want: []string{"14:12 transports.sip.trunks.carrier.register: registration needs auth_user"}},
		{name: "register_expires without register", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\nregister_expires = \"10m\"\n",
			want: []string{"14:20 transports.sip.trunks.carrier.register_expires: register_expires is the lifetime of a registration"}},
		{name: "ranges", trunk: "[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\ncalls_per_second = 0\nregister = false\nregister_expires = \"30s\"\nmax_calls = -1\n",
			want: []string{"14:20 transports.sip.trunks.carrier.calls_per_second: 0 is out of range",
				"16:20 transports.sip.trunks.carrier.register_expires: 30s is out of range 1m0s..24h0m0s",
				"17:13 transports.sip.trunks.carrier.max_calls: -1 is out of range 0..100000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ds := Parse("a.toml", []byte(trunkBase+c.trunk), TOML, Options{LookupEnv: envWith(c.env...)})
			ds.Sort()
			if have := got(ds); !match(have, c.want) {
				t.Fatalf("diagnostics:\n%s\nwant prefixes:\n%s", strings.Join(have, "\n"), strings.Join(c.want, "\n"))
			}
			if c.hint != "" && !strings.Contains(ds[0].Hint, c.hint) {
				t.Errorf("hint %q does not mention %q", ds[0].Hint, c.hint)
			}
			for _, d := range ds {
				if strings.Contains(d.String(), "X-Evil") || strings.Contains(d.String(), "hunter2") {
					t.Errorf("a diagnostic shows the value: %s", d)
				}
			}
			if f == nil {
				t.Fatal("no File")
			}
		})
	}
}

// TestTrunkValues: a trunk's values and defaults, trunks sorted by name,
// and the same trunk read from YAML.
func TestTrunkValues(t *testing.T) {
	src := trunkBase + `[transports.sip.trunks.zeta]
address = "sips:carrier.example"
[transports.sip.trunks.alpha]
address = "10.0.0.1:5060"
transport = "tcp"
auth_user = "brisvox"
auth_password_env = "ALPHA_PASSWORD"
routes = ["sip:a.example;lr", "sip:b.example;lr"]
register = true
`
	f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith("ALPHA_PASSWORD")})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	tr := f.Transports.SIP.Trunks
	if len(tr) != 2 || tr[0].Name != "alpha" || tr[1].Name != "zeta" {
		t.Fatalf("trunks: %+v", tr)
	}
	a, z := tr[0], tr[1]
	if a.Address.V != "10.0.0.1:5060" || a.Transport.V != "tcp" || a.AuthUser.V != "brisvox" || a.AuthPasswordEnv.V != "ALPHA_PASSWORD" ||
		len(a.Routes) != 2 || a.Routes[1].V != "sip:b.example;lr" || !a.Register.V || a.RegisterExpires.V != time.Hour || a.Pos != (Pos{14, 24}) {
		t.Errorf("alpha: %+v", a)
	}
	if z.Transport.V != "tls" || z.Transport.Set || z.CallsPerSecond.V != 10 || z.DTMF.V != "auto" || z.Transfer.V != "refer" ||
		z.MaxCalls.V != 0 || z.EarlyMedia.V || z.Register.V || z.From.V != "" {
		t.Errorf("zeta defaults: %+v", z)
	}

	yml := `prompt: p
stt: {provider: pocketsphinx}
llm: {provider: rules}
tts: {provider: flite}
transports:
  sip:
    udp: 127.0.0.1:5060
    allow: [127.0.0.0/8]
    codecs: [opus, G722]
    trunks:
      carrier:
        address: carrier.example
        dtmf: tones
`
	f, ds = Parse("a.yaml", []byte(yml), YAML, Options{LookupEnv: envWith()})
	if have := got(ds); !match(have, []string{`13:15 transports.sip.trunks.carrier.dtmf: "tones" is not one of`}) {
		t.Fatalf("yaml: %s", strings.Join(have, "\n"))
	}
	if tr := f.Transports.SIP.Trunks; len(tr) != 1 || tr[0].Address.V != "carrier.example" || tr[0].Address.Pos != (Pos{12, 18}) {
		t.Errorf("yaml trunks: %+v", tr)
	}
}

// TestTrunkLimit: the 33rd trunk is refused once, and the first 32 are
// kept. Mutation caught: the bound dropped (a file of thousands of trunks
// makes as many limiters and metric labels).
func TestTrunkLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(trunkBase)
	for i := range maxTrunks + 3 {
		fmt.Fprintf(&b, "[transports.sip.trunks.t%02d]\naddress = \"carrier.example\"\n", i)
	}
	f, ds := Parse("a.toml", []byte(b.String()), TOML, Options{LookupEnv: envWith()})
	if have := got(ds); !match(have, []string{"76:24 transports.sip.trunks.t32: more than 32 trunks"}) {
		t.Fatalf("diagnostics:\n%s", strings.Join(have, "\n"))
	}
	if n := len(f.Transports.SIP.Trunks); n != maxTrunks {
		t.Errorf("%d trunks kept, want %d", n, maxTrunks)
	}
}

// TestTransferTrunk: transports.sip.transfer_trunk names one of the
// file's trunks. Mutation caught: a name of no trunk accepted (serve
// would refuse the file at sip.Config.Validate, without a position).
func TestTransferTrunk(t *testing.T) {
	for _, c := range []struct{ name, value, want, hint string }{
		{"a trunk", "carrier", "", ""},
		{"a typo", "carier", `12:18 transports.sip.transfer_trunk: "carier" is not a trunk of this file`, `did you mean "carrier"?`},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := trunkBase + "transfer_trunk = \"" + c.value + "\"\n[transports.sip.trunks.carrier]\naddress = \"carrier.example\"\n"
			f, ds := Parse("a.toml", []byte(src), TOML, Options{LookupEnv: envWith()})
			if c.want == "" {
				if len(ds) > 0 || f.Transports.SIP.TransferTrunk.V != c.value {
					t.Fatalf("%+v %s", f.Transports.SIP.TransferTrunk, ds)
				}
				return
			}
			if have := got(ds); !match(have, []string{c.want}) || !strings.Contains(ds[0].Hint, c.hint) {
				t.Fatalf("diagnostics:\n%s (hint %q)\nwant %s", strings.Join(have, "\n"), ds[0].Hint, c.want)
			}
			if f.Transports.SIP.TransferTrunk.V != "" {
				t.Errorf("a refused transfer_trunk kept: %+v", f.Transports.SIP.TransferTrunk)
			}
		})
	}
}
