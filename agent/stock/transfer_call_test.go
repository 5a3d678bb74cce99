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

// fakeLine records transfers and key presses and answers with err.
type fakeLine struct {
	mu    sync.Mutex
	calls []string // "session -> target" or "session keys"
	err   error
	block bool // wait for ctx
}

func (l *fakeLine) TransferCall(ctx context.Context, session, target string) error {
	l.mu.Lock()
	l.calls = append(l.calls, session+" -> "+target)
	l.mu.Unlock()
	if l.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return l.err
}

func (l *fakeLine) SendDTMF(ctx context.Context, session, digits string) error {
	l.mu.Lock()
	l.calls = append(l.calls, session+" keys "+digits)
	l.mu.Unlock()
	return l.err
}

// errBusy stands for a transport's failure in fixed words.
var errBusy = errors.New("busy (486)")

func runTool(t *testing.T, tool agent.Tool, args, session string) messages.ToolResult {
	t.Helper()
	reg, err := agent.NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	call := messages.ToolCall{ID: "t1.0", Name: tool.Spec().Name, Arguments: json.RawMessage(args)}
	info := agent.CallInfo{Session: session, CallID: "t1.0", Epoch: 1,
		IdempotencyKey: agent.IdempotencyKey{Session: session, Epoch: 1, CallID: "t1.0"}}
	return agent.RunCall(context.Background(), reg, call, info)
}

func TestTransferCall(t *testing.T) {
	allow, err := stock.NewAllowlist([]string{"+33123456789", "sip:*@support.example"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       string
		session    string
		err        error
		wantCalls  []string
		wantKind   string
		wantDetail string
	}{
		{name: "allowed number", args: `{"destination":"+33123456789"}`, session: "s1", wantCalls: []string{"s1 -> +33123456789"}},
		// Catches the model's text dialled in place of the normalised one.
		{name: "allowed uri, dialled normalised", args: `{"destination":"sip:Bob@SUPPORT.example;maddr=evil.example"}`, session: "s1",
			wantCalls: []string{"s1 -> sip:Bob@support.example"}},
		// Catches an unlisted destination dialled, or answered as
		// tool_failed (the model must read invalid_arguments).
		{name: "unlisted", args: `{"destination":"+33999999999"}`, session: "s1", wantKind: agent.KindInvalidArguments, wantDetail: "not one this agent may transfer to"},
		{name: "CRLF refused in code", args: `{"destination":"sip:a@support.example\r\nVia: x"}`, session: "s1", wantKind: agent.KindInvalidArguments},
		{name: "the transfer fails", args: `{"destination":"+33123456789"}`, session: "s1", err: errBusy,
			wantCalls: []string{"s1 -> +33123456789"}, wantKind: agent.KindToolFailed, wantDetail: "the transfer failed: busy (486); tell the caller and go on"},
		{name: "no session", args: `{"destination":"+33123456789"}`, wantKind: agent.KindToolFailed, wantDetail: "not known"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := &fakeLine{err: tt.err}
			tool, err := stock.TransferCall(line, stock.TransferConfig{Allow: allow})
			if err != nil {
				t.Fatal(err)
			}
			r := runTool(t, tool, tt.args, tt.session)
			if tt.wantKind != "" {
				b := decodeError(t, r)
				if b.Error != tt.wantKind || !strings.Contains(b.Detail, tt.wantDetail) {
					t.Errorf("error %q %q, want %q containing %q", b.Error, b.Detail, tt.wantKind, tt.wantDetail)
				}
			} else if r.IsError || !strings.Contains(r.Content, `"status":"transferred"`) {
				t.Errorf("result %s, want transferred", r.Content)
			}
			if strings.Join(line.calls, "|") != strings.Join(tt.wantCalls, "|") {
				t.Errorf("transfers %q, want %q", line.calls, tt.wantCalls)
			}
		})
	}
}

func TestTransferCallConfig(t *testing.T) {
	allow, _ := stock.NewAllowlist([]string{"+33123456789"})
	if _, err := stock.TransferCall(&fakeLine{}, stock.TransferConfig{}); !errors.Is(err, stock.ErrAllowPattern) {
		t.Errorf("no allowlist: %v", err)
	}
	tool, _ := stock.TransferCall(nil, stock.TransferConfig{Allow: allow})
	// Catches the gate off by default.
	if !tool.Spec().Confirm || strings.Contains(tool.Spec().Description, "+33123456789") {
		t.Errorf("default: Confirm %v, description %q", tool.Spec().Confirm, tool.Spec().Description)
	}
	tool, _ = stock.TransferCall(nil, stock.TransferConfig{Allow: allow, NoConfirm: true, DescribeTargets: true})
	if tool.Spec().Confirm || !strings.Contains(tool.Spec().Description, "+33123456789") {
		t.Errorf("no confirm, described: Confirm %v, description %q", tool.Spec().Confirm, tool.Spec().Description)
	}
}

func TestTransferCallCtx(t *testing.T) {
	allow, _ := stock.NewAllowlist([]string{"+33123456789"})
	line := &fakeLine{block: true}
	tool, _ := stock.TransferCall(line, stock.TransferConfig{Allow: allow})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tool.Call(ctx, json.RawMessage(`{"destination":"+33123456789"}`), agent.CallInfo{Session: "s1"})
	if !errors.Is(err, context.Canceled) || len(line.calls) != 0 {
		t.Errorf("cancelled: %v, transfers %q", err, line.calls)
	}
}

func TestSendDTMF(t *testing.T) {
	tests := []struct {
		name, args, session string
		err                 error
		wantCalls           []string
		wantKind, wantBody  string
	}{
		{name: "keys", args: `{"digits":"4521#"}`, session: "s1", wantCalls: []string{"s1 keys 4521#"}, wantBody: `{"status":"sent","digits":5}`},
		{name: "bad digit", args: `{"digits":"12e"}`, session: "s1", wantKind: agent.KindInvalidArguments},
		{name: "sender fails", args: `{"digits":"1"}`, session: "s1", err: errBusy, wantCalls: []string{"s1 keys 1"}, wantKind: agent.KindToolFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := &fakeLine{err: tt.err}
			r := runTool(t, stock.SendDTMF(line), tt.args, tt.session)
			if tt.wantKind != "" {
				if b := decodeError(t, r); b.Error != tt.wantKind {
					t.Errorf("error %q, want %q", b.Error, tt.wantKind)
				}
			} else if r.Content != tt.wantBody {
				t.Errorf("result %s, want %s", r.Content, tt.wantBody)
			}
			if strings.Join(line.calls, "|") != strings.Join(tt.wantCalls, "|") {
				t.Errorf("sent %q, want %q", line.calls, tt.wantCalls)
			}
		})
	}
	// The schema refuses bad digits first; the tool checks again when
	// called directly (defence in depth). Catches ValidDigits dropped.
	for _, d := range []string{"", "12e", "a", strings.Repeat("1", 33), "1\n"} {
		line := &fakeLine{}
		_, err := stock.SendDTMF(line).Call(context.Background(), json.RawMessage(`{"digits":`+strqu(d)+`}`), agent.CallInfo{Session: "s1"})
		if !errors.Is(err, stock.ErrBadDigits) || !errors.Is(err, agent.ErrInvalidArguments) || len(line.calls) != 0 {
			t.Errorf("digits %q: %v, sent %q", d, err, line.calls)
		}
	}
}

func strqu(s string) string { b, _ := json.Marshal(s); return string(b) }
