package stock_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/messages"
)

// recordingEnder records the calls it was asked to end.
type recordingEnder struct {
	mu    sync.Mutex
	calls []string // "session: reason"
	err   error
}

func (e *recordingEnder) EndCall(session, reason string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, session+": "+reason)
	return e.err
}

var errLineGone = errors.New("line already gone")

func TestEndCall(t *testing.T) {
	tests := []struct {
		name       string
		session    string
		args       string
		enderErr   error
		nilEnder   bool
		wantEnded  []string
		wantKind   string
		wantDetail string
	}{
		{name: "with a reason", session: "s1", args: `{"reason":"the caller said goodbye"}`, wantEnded: []string{"s1: the caller said goodbye"}},
		{name: "without a reason", session: "s1", args: `{}`, wantEnded: []string{"s1: "}},
		// Catches an Ender error answered as success: the model would
		// think the caller is gone.
		{name: "the ender fails", session: "s1", args: `{}`, enderErr: errLineGone, wantEnded: []string{"s1: "},
			wantKind: agent.KindToolFailed, wantDetail: "could not be ended"},
		{name: "no session", args: `{}`, wantKind: agent.KindToolFailed, wantDetail: "no session"},
		{name: "no ender", session: "s1", args: `{}`, nilEnder: true, wantKind: agent.KindToolFailed, wantDetail: "not available"},
		{name: "reason too long", session: "s1", args: `{"reason":"` + strings.Repeat("x", 201) + `"}`, wantKind: agent.KindInvalidArguments},
		{name: "an unknown argument", session: "s1", args: `{"now":true}`, wantKind: agent.KindInvalidArguments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &recordingEnder{err: tt.enderErr}
			var tool agent.Tool
			if tt.nilEnder {
				tool = stock.EndCall(nil)
			} else {
				tool = stock.EndCall(e)
			}
			reg, err := agent.NewRegistry(tool)
			if err != nil {
				t.Fatal(err)
			}
			call := messages.ToolCall{ID: "t1.0", Name: agent.EndCallTool, Arguments: json.RawMessage(tt.args)}
			info := agent.CallInfo{Session: tt.session, CallID: "t1.0", Epoch: 1,
				IdempotencyKey: agent.IdempotencyKey{Session: tt.session, Epoch: 1, CallID: "t1.0"}}
			r := agent.RunCall(context.Background(), reg, call, info)
			if tt.wantKind != "" {
				b := decodeError(t, r)
				if b.Error != tt.wantKind || !strings.Contains(b.Detail, tt.wantDetail) {
					t.Errorf("error %q %q, want %q containing %q", b.Error, b.Detail, tt.wantKind, tt.wantDetail)
				}
			} else if r.IsError || !strings.Contains(r.Content, "ending") {
				t.Errorf("result %s, want the call ending", r.Content)
			}
			if strings.Join(e.calls, "|") != strings.Join(tt.wantEnded, "|") {
				t.Errorf("ender called %q, want %q", e.calls, tt.wantEnded)
			}
		})
	}
}

func TestEndCallWrapsEnderError(t *testing.T) {
	_, err := stock.EndCall(&recordingEnder{err: errLineGone}).Call(context.Background(), json.RawMessage(`{}`), agent.CallInfo{Session: "s1"})
	if !errors.Is(err, stock.ErrEndCall) || !errors.Is(err, errLineGone) {
		t.Errorf("err %v, want ErrEndCall wrapping the ender's error", err)
	}
}

func TestEndCallSpec(t *testing.T) {
	got, want := stock.EndCall(nil).Spec(), agent.EndCallSpec()
	if got.Name != want.Name || got.Effect != agent.SideEffect || got.FillerAfter >= 0 || string(got.Parameters) != string(want.Parameters) {
		t.Errorf("spec %+v, want agent.EndCallSpec()", got)
	}
}
