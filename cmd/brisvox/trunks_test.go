package main

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/sip"
)

// trunkAgent is a SIP agent file with the given trunk tables.
func trunkAgent(trunks string) string {
	return `prompt = "p"
[stt]
provider = "pocketsphinx"
[llm]
provider = "rules"
[tts]
provider = "flite"
[transports.sip]
udp = "127.0.0.1:5060"
allow = ["127.0.0.0/8"]
codecs = ["opus", "G722"]
` + trunks
}

// envOf is a LookupEnv over a map.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
}

// parseTrunks checks an agent file's trunks as `brisvox check` does.
func parseTrunks(t *testing.T, trunks string, env map[string]string) (agentfile.SIP, agentfile.Diagnostics) {
	t.Helper()
	f, ds := agentfile.Parse("a.toml", []byte(trunkAgent(trunks)), agentfile.TOML, agentfile.Options{LookupEnv: envOf(env)})
	if f == nil {
		t.Fatal("no File")
	}
	return f.Transports.SIP, ds
}

// TestSipTrunks: the file's trunks become sip.TrunkConfigs by name, the
// password read from its variable; an unset or empty variable is an error
// naming the variable and never a value.
// Mutations caught (each seen failing): the password not read (a trunk
// that answers every challenge with an empty password), the lookup's
// "set but empty" case dropped, a field (routes) not mapped.
func TestSipTrunks(t *testing.T) {
	const secret = "s3cr3t-pa55word"
	full := `[transports.sip.trunks.carrier]
address = "sip:carrier.example:5061"
transport = "tls"
outbound_proxy = "sip:proxy.carrier.example;lr"
routes = ["sip:edge.carrier.example;lr"]
auth_user = "brisvox"
auth_password_env = "CARRIER_PASSWORD"
from = "+33123456789"
max_calls = 4
calls_per_second = 2
early_media = true
dtmf = "info"
transfer = "bridge"
register = true
register_expires = "10m"
[transports.sip.trunks.pbx]
address = "10.0.0.9"
`
	cases := []struct {
		name    string
		trunks  string
		check   map[string]string // the environment of the file's check
		serve   map[string]string // the environment of sipTrunks
		want    map[string]sip.TrunkConfig
		wantErr string
	}{
		{name: "none", want: nil},
		{name: "full", trunks: full, check: map[string]string{"CARRIER_PASSWORD": "x"}, serve: map[string]string{"CARRIER_PASSWORD": secret},
			want: map[string]sip.TrunkConfig{
				"carrier": {Address: "sip:carrier.example:5061", Transport: "TLS", OutboundProxy: "sip:proxy.carrier.example;lr",
					Routes: []string{"sip:edge.carrier.example;lr"}, AuthUser: "brisvox", AuthPassword: secret, From: "+33123456789",
					MaxCalls: 4, CallsPerSecond: 2, EarlyMedia: true, DTMF: sip.DTMFInfo, Transfer: sip.TransferBridge,
					Register: true, RegisterExpires: 10 * time.Minute},
				"pbx": {Address: "10.0.0.9", Transport: "UDP", CallsPerSecond: sip.DefaultCallsPerSecond, DTMF: sip.DTMFAuto,
					Transfer: sip.TransferRefer, RegisterExpires: sip.DefaultRegisterExpires},
			}},
		{name: "variable unset at serve", trunks: full, check: map[string]string{"CARRIER_PASSWORD": "x"}, serve: map[string]string{},
			wantErr: "transports.sip.trunks.carrier.auth_password_env: CARRIER_PASSWORD is not set"},
		{name: "variable empty at serve", trunks: full, check: map[string]string{"CARRIER_PASSWORD": "x"}, serve: map[string]string{"CARRIER_PASSWORD": ""},
			wantErr: "CARRIER_PASSWORD is not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ds := parseTrunks(t, c.trunks, c.check)
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			got, err := sipTrunks(s, envOf(c.serve))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("trunks:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestTrunkDefaults: the file's trunk defaults are sip's (agentfile may
// not import sip, so they are written twice). Mutation caught: either
// default changed on one side only.
func TestTrunkDefaults(t *testing.T) {
	s, ds := parseTrunks(t, "[transports.sip.trunks.c]\naddress = \"carrier.example\"\n", nil)
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	tr := s.Trunks[0]
	if tr.CallsPerSecond.V != sip.DefaultCallsPerSecond || tr.RegisterExpires.V != sip.DefaultRegisterExpires ||
		tr.DTMF.V != sip.DTMFAuto || tr.Transfer.V != sip.TransferRefer {
		t.Errorf("defaults %v, %v, %s, %s; sip's %v, %v, %s, %s", tr.CallsPerSecond.V, tr.RegisterExpires.V, tr.DTMF.V, tr.Transfer.V,
			float64(sip.DefaultCallsPerSecond), sip.DefaultRegisterExpires, sip.DTMFAuto, sip.TransferRefer)
	}
}

// TestTrunksAgree: for each value, the file's check accepts it exactly
// when sip.TrunkConfig.Validate does (agentfile copies sip's address,
// URI and number rules). Mutation caught: a rule changed in one copy
// (the port bound, an IPv6 bracket, a number's characters).
func TestTrunksAgree(t *testing.T) {
	cases := []struct{ key, value string }{
		{"address", "carrier.example"},
		{"address", "carrier.example:5060"},
		{"address", "carrier.example:0"},
		{"address", "carrier.example:65536"},
		{"address", "carrier.example:"},
		{"address", ":5060"},
		{"address", "[2001:db8::1]:5060"},
		{"address", "[2001:db8::1]"},
		{"address", "[2001:db8::1"},
		{"address", "[2001:db8::1]5060"},
		{"address", "sip:carrier.example"},
		{"address", "sips:user@carrier.example:5061;transport=tls"},
		{"address", "sip:"},
		{"address", "carrier.example/path"},
		{"address", "user@carrier.example"},
		{"address", "SIP:CARRIER.EXAMPLE"},
		{"from", "+33123456789"},
		{"from", "desk-1"},
		{"from", "+33 1 23"},
		{"from", "33+1"},
		{"from", "sip:desk@pbx.example"},
		{"from", "tel:+331"},
		{"from", strings.Repeat("1", 65)},
		{"outbound_proxy", "sip:proxy.example;lr"},
		{"outbound_proxy", "proxy.example"},
		{"outbound_proxy", "sip:proxy example"},
		{"outbound_proxy", "sips:<proxy>"},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			table := "[transports.sip.trunks.c]\n"
			if c.key != "address" {
				table += "address = \"carrier.example\"\n"
			}
			table += c.key + " = " + strconv.Quote(c.value) + "\n"
			s, ds := parseTrunks(t, table, nil)
			fileOK := len(ds) == 0
			cfg := sip.TrunkConfig{Address: "carrier.example", Transport: "UDP", CallsPerSecond: 1, RegisterExpires: time.Hour, DTMF: sip.DTMFAuto, Transfer: sip.TransferRefer}
			switch c.key {
			case "address":
				cfg.Address = c.value
			case "from":
				cfg.From = c.value
			case "outbound_proxy":
				cfg.OutboundProxy = c.value
			}
			err := cfg.Validate()
			if fileOK != (err == nil) {
				t.Fatalf("the file's check says %v (%s), sip.TrunkConfig.Validate %v", fileOK, ds, err)
			}
			if fileOK {
				if _, err := sipTrunks(s, envOf(nil)); err != nil {
					t.Errorf("sipTrunks: %v", err)
				}
			}
		})
	}
}
