package agentbuild

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/messages"
)

// fakeLine records what the telephony tools asked of the call.
type fakeLine struct{ got []string }

func (l *fakeLine) EndCall(session, _ string) error {
	l.got = append(l.got, "end "+session)
	return nil
}
func (l *fakeLine) TransferCall(_ context.Context, session, target string) error {
	l.got = append(l.got, "transfer "+session+" "+target)
	return nil
}
func (l *fakeLine) SendDTMF(_ context.Context, session, digits string) error {
	l.got = append(l.got, "keys "+session+" "+digits)
	return nil
}

// TestTelephonyTools: the file's [tools.transfer_call] reaches the tool
// (its allowlist, its gate, its description) and the call's line is the
// one the tools use.
func TestTelephonyTools(t *testing.T) {
	const base = "prompt = \"p\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\n" +
		"[tools]\nenabled = [\"transfer_call\", \"send_dtmf\"]\n[tools.transfer_call]\nallow = [\"sip:*@support.example\"]\n"
	tests := []struct {
		name            string
		extra           string
		confirm, listed bool
	}{
		// Catches the gate lost between the file and the registry.
		{name: "defaults", confirm: true},
		// Catches confirm = false ignored.
		{name: "no confirmation, described", extra: "confirm = false\ndescribe_targets = true\n", listed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ds := agentfile.Parse("a.toml", []byte(base+tt.extra), agentfile.TOML, agentfile.Options{KnownTools: ToolNames()})
			if len(ds) > 0 {
				t.Fatal(ds)
			}
			ln := &fakeLine{}
			reg, err := newCatalogue().registry(f.Tools, ln)
			if err != nil {
				t.Fatal(err)
			}
			_, spec, ok := reg.Lookup(agent.TransferCallTool)
			if !ok || spec.Confirm != tt.confirm || (len(spec.Description) > 0 && strings.Contains(spec.Description, "support.example") != tt.listed) {
				t.Fatalf("transfer_call spec: ok %v confirm %v, description %q", ok, spec.Confirm, spec.Description)
			}
			info := agent.CallInfo{Session: "s1", CallID: "c.0", Epoch: 1, IdempotencyKey: agent.IdempotencyKey{Session: "s1", Epoch: 1, CallID: "c.0"}}
			r := agent.RunCall(context.Background(), reg, messages.ToolCall{ID: "c.0", Name: agent.TransferCallTool, Arguments: json.RawMessage(`{"destination":"sip:Ann@Support.example;maddr=x"}`)}, info)
			r2 := agent.RunCall(context.Background(), reg, messages.ToolCall{ID: "c.1", Name: agent.SendDTMFTool, Arguments: json.RawMessage(`{"digits":"9"}`)}, info)
			if r.IsError || r2.IsError || len(ln.got) != 2 || ln.got[0] != "transfer s1 sip:Ann@support.example" || ln.got[1] != "keys s1 9" {
				t.Errorf("results %s %s, line %q", r.Content, r2.Content, ln.got)
			}
		})
	}
}
