package agentbuild

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/messages"
)

// The recording half of fakeLine (telephony_test.go).
func (l *fakeLine) PauseRecording(call messages.CallID) error {
	l.got = append(l.got, "pause "+string(call))
	return nil
}

func (l *fakeLine) ResumeRecording(call messages.CallID) error {
	l.got = append(l.got, "resume "+string(call))
	return nil
}

var _ line = (*fakeLine)(nil)

// TestRecordingTools: an agent file may enable pause_recording and
// resume_recording (brisvox check knows them), the registry holds them
// with their kinds, and they reach the call's line.
func TestRecordingTools(t *testing.T) {
	names := ToolNames()
	// Catches a tool missing from the catalogue: check would refuse it
	// in tools.enabled.
	for _, n := range []string{stock.PauseRecordingTool, stock.ResumeRecordingTool} {
		if !slices.Contains(names, n) {
			t.Fatalf("ToolNames %v lacks %s", names, n)
		}
	}
	const src = "prompt = \"p\"\n[stt]\nprovider = \"pocketsphinx\"\n[llm]\nprovider = \"rules\"\n[tts]\nprovider = \"flite\"\n[transports.webrtc]\n" +
		"[tools]\nenabled = [\"pause_recording\", \"resume_recording\"]\n"
	f, ds := agentfile.Parse("a.toml", []byte(src), agentfile.TOML, agentfile.Options{KnownTools: names})
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	ln := &fakeLine{}
	reg, err := newCatalogue().registry(f.Tools, ln)
	if err != nil {
		t.Fatal(err)
	}
	for name, effect := range map[string]agent.Effect{stock.PauseRecordingTool: agent.ReadOnly, stock.ResumeRecordingTool: agent.SideEffect} {
		if _, spec, ok := reg.Lookup(name); !ok || spec.Effect != effect {
			t.Errorf("%s: registered %v, effect %v, want %v", name, ok, spec.Effect, effect)
		}
	}
	info := agent.CallInfo{Session: "s1", CallID: "c.0", Epoch: 1}
	r1 := agent.RunCall(context.Background(), reg, messages.ToolCall{ID: "c.0", Name: stock.PauseRecordingTool, Arguments: json.RawMessage(`{}`)}, info)
	info.CallID, info.IdempotencyKey = "c.1", agent.IdempotencyKey{Session: "s1", Epoch: 1, CallID: "c.1"}
	r2 := agent.RunCall(context.Background(), reg, messages.ToolCall{ID: "c.1", Name: stock.ResumeRecordingTool, Arguments: json.RawMessage(`{}`)}, info)
	// Catches a tool built on another line than the call's (nil: every
	// call "not being recorded"), or the two swapped.
	if r1.IsError || r2.IsError || strings.Join(ln.got, "|") != "pause s1|resume s1" {
		t.Errorf("results %s %s, line %q", r1.Content, r2.Content, ln.got)
	}
}
