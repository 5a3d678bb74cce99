package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

func TestContextJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want string
	}{
		{name: "empty", want: `[]`},
		{
			name: "every role",
			msgs: []Message{
				System("be brief"),
				User("book nine"),
				{Role: RoleAssistant, Text: "Checking.", ToolCalls: []messages.ToolCall{tc("t1.0", "book", `{"slot":"9"}`)}, ProviderData: []byte("sig")},
				{Role: RoleTool, ToolCallID: "t1.0", Text: `{"error":"timeout"}`, IsError: true},
			},
			want: `[{"role":"system","text":"be brief"},{"role":"user","text":"book nine"},` +
				`{"role":"assistant","text":"Checking.","tool_calls":[{"id":"t1.0","name":"book","arguments":{"slot":"9"}}],"provider_data":"c2ln"},` +
				`{"role":"tool","call_id":"t1.0","content":"{\"error\":\"timeout\"}","is_error":true}]`,
		},
		{
			name: "call with no arguments",
			msgs: []Message{Assistant("", []messages.ToolCall{tc("t1.0", "now", "")})},
			want: `[{"role":"assistant","tool_calls":[{"id":"t1.0","name":"now"}]}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctxOf(tt.msgs...)
			data, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(data) != tt.want {
				t.Fatalf("Marshal =\n%s\nwant\n%s", data, tt.want)
			}
			var back Context
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if back.Fingerprint() != c.Fingerprint() {
				t.Fatalf("round trip =\n%s\nwant\n%s", back.Fingerprint(), c.Fingerprint())
			}
			for i, m := range back.Messages() {
				if !bytes.Equal(m.ProviderData, tt.msgs[i].ProviderData) {
					t.Fatalf("message %d provider data = %q, want %q", i, m.ProviderData, tt.msgs[i].ProviderData)
				}
			}
		})
	}
}

func TestContextJSONRejects(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr error // nil: any error
	}{
		{name: "unknown role", data: `[{"role":"narrator","text":"x"}]`, wantErr: ErrUnknownRole},
		{name: "missing role", data: `[{"text":"x"}]`, wantErr: ErrUnknownRole},
		{name: "tool field on a user message", data: `[{"role":"user","text":"x","call_id":"t1.0"}]`, wantErr: ErrUnknownRole},
		{name: "text on a tool message", data: `[{"role":"tool","call_id":"t1.0","text":"x"}]`, wantErr: ErrUnknownRole},
		{name: "tool calls on a system message", data: `[{"role":"system","tool_calls":[{"id":"a","name":"b"}]}]`, wantErr: ErrUnknownRole},
		{name: "unknown field", data: `[{"role":"user","text":"x","mood":"happy"}]`},
		{name: "not a list", data: `{"role":"user"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctxOf(User("kept"))
			err := c.UnmarshalJSON([]byte(tt.data))
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("UnmarshalJSON() = %v, want %v", err, tt.wantErr)
			}
			if c.Len() != 1 {
				t.Fatalf("a rejected document changed the context")
			}
		})
	}
}

func TestContextJSONTrailingData(t *testing.T) {
	var c Context
	err := c.UnmarshalJSON([]byte(`[] []`))
	if err == nil || !strings.Contains(err.Error(), "after the message list") {
		t.Fatalf("UnmarshalJSON() = %v, want a trailing data error", err)
	}
}

func TestContextJSONMarshalUnknownRole(t *testing.T) {
	_, err := json.Marshal(ctxOf(Message{Role: "narrator"}))
	if !errors.Is(err, ErrUnknownRole) {
		t.Fatalf("Marshal() = %v, want ErrUnknownRole", err)
	}
}
