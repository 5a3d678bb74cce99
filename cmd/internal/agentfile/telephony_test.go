package agentfile

import (
	"fmt"
	"strings"
	"testing"
)

func TestTransferCallSettings(t *testing.T) {
	const base = "prompt = \"p\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\n"
	tests := []struct {
		name  string
		tools string
		want  string // "" no diagnostic; else "line:col path"
	}{
		{name: "allowed", tools: "[tools]\nenabled = [\"transfer_call\"]\n[tools.transfer_call]\nallow = [\"+33123456789\", \"sip:*@support.example\", \"+4420*\"]\n"},
		// Catches transfer_call enabled with no allowlist passing the check.
		{name: "no allowlist", tools: "[tools]\nenabled = [\"end_call\", \"transfer_call\"]\n", want: "10:24 tools.transfer_call.allow"},
		// Catches a pattern that reaches everything accepted.
		{name: "match all", tools: "[tools]\nenabled = [\"transfer_call\"]\n[tools.transfer_call]\nallow = [\"+33123456789\", \"+*\"]\n", want: "12:26 tools.transfer_call.allow[1]"},
		{name: "host wildcard", tools: "[tools]\nenabled = [\"transfer_call\"]\n[tools.transfer_call]\nallow = [\"sip:desk@*\"]\n", want: "12:10 tools.transfer_call.allow[0]"},
		{name: "not enabled", tools: "[tools]\nenabled = [\"end_call\"]\n[tools.transfer_call]\nallow = [\"+33123456789\"]\n", want: "11:8 tools.transfer_call"},
		{name: "confirm both ways", tools: "[tools]\nenabled = [\"transfer_call\"]\nconfirm = [\"transfer_call\"]\n[tools.transfer_call]\nallow = [\"+33123456789\"]\nconfirm = false\n", want: "14:11 tools.transfer_call.confirm"},
		{name: "unknown key", tools: "[tools]\nenabled = [\"transfer_call\"]\n[tools.transfer_call]\nallow = [\"+33123456789\"]\nallowed = []\n", want: "13:1 tools.transfer_call.allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ds := Parse("a.toml", []byte(base+tt.tools), TOML, Options{LookupEnv: envWith()})
			var got []string
			for _, d := range ds {
				got = append(got, fmt.Sprintf("%d:%d %s", d.Line, d.Col, d.Path))
			}
			if tt.want == "" {
				if len(ds) > 0 {
					t.Fatalf("diagnostics: %s", ds)
				}
				tc := f.Tools.TransferCall
				if len(tc.Allow) != 3 || !tc.Confirm.V || tc.DescribeTargets.V || !f.Tools.Confirms("transfer_call") {
					t.Errorf("settings %+v", tc)
				}
				return
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("diagnostics %q, want [%q]\n%s", got, tt.want, ds)
			}
			for _, d := range ds {
				if d.Hint == "" || strings.Contains(d.Msg, "\n") {
					t.Errorf("diagnostic without a hint: %v", d)
				}
			}
		})
	}
}
