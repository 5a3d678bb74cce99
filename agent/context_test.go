package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

func TestNewContext(t *testing.T) {
	tests := []struct {
		name   string
		system string
		want   int
	}{
		{name: "system prompt is the first message", system: "be brief", want: 1},
		{name: "empty system prompt adds nothing", system: "", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewContext(tt.system)
			if c.Len() != tt.want {
				t.Fatalf("Len() = %d, want %d", c.Len(), tt.want)
			}
			if m := c.Messages(); tt.want == 1 && (m[0].Role != RoleSystem || m[0].Text != tt.system) {
				t.Fatalf("At(0) = %+v", c.At(0))
			}
		})
	}
}

// Catches Messages returning the internal slice: a request in flight would
// see messages appended or cut after it started.
func TestMessagesIsACopy(t *testing.T) {
	c := ctxOf(User("hello"), Assistant("hi there friend", nil))
	snap := c.Messages()
	c.Append(User("more"))
	c.CutAssistantWords(1, 1)
	if len(snap) != 2 || snap[1].Text != "hi there friend" {
		t.Fatalf("snapshot changed: %+v", snap)
	}
	snap[0].Text = "edited"
	if c.At(0).Text != "hello" {
		t.Fatalf("editing the snapshot changed the context: %+v", c.At(0))
	}
}

func TestValidate(t *testing.T) {
	call1 := tc("t1.0", "lookup", `{}`)
	call2 := tc("t1.1", "book", `{"slot":"9am"}`)
	tests := []struct {
		name    string
		msgs    []Message
		wantIdx int // -1: valid
		reason  string
	}{
		{name: "empty context", msgs: nil, wantIdx: -1},
		{name: "plain conversation", msgs: []Message{System("s"), User("hi"), Assistant("hello", nil)}, wantIdx: -1},
		{
			name:    "calls answered in any order",
			msgs:    []Message{User("u"), Assistant("", []messages.ToolCall{call1, call2}), answer("t1.1", "ok"), answer("t1.0", "ok"), Assistant("done", nil)},
			wantIdx: -1,
		},
		{
			name:    "system note after the answers",
			msgs:    []Message{Assistant("", []messages.ToolCall{call1}), answer("t1.0", "ok"), System("late note")},
			wantIdx: -1,
		},
		{name: "empty assistant message", msgs: []Message{User("u"), Assistant("", nil)}, wantIdx: 1, reason: "empty assistant"},
		{
			name:    "provider data alone is empty",
			msgs:    []Message{{Role: RoleAssistant, ProviderData: []byte("sig")}},
			wantIdx: 0, reason: "empty assistant",
		},
		{name: "unanswered call at the end", msgs: []Message{User("u"), Assistant("x", []messages.ToolCall{call1})}, wantIdx: 1, reason: "not answered"},
		{
			name:    "user message before the answer",
			msgs:    []Message{Assistant("", []messages.ToolCall{call1}), User("u"), answer("t1.0", "ok")},
			wantIdx: 1, reason: "before the answer",
		},
		{
			name:    "system message before the answer",
			msgs:    []Message{Assistant("", []messages.ToolCall{call1, call2}), answer("t1.0", "ok"), System("note"), answer("t1.1", "ok")},
			wantIdx: 2, reason: "before the answer",
		},
		{
			name:    "answered twice",
			msgs:    []Message{Assistant("", []messages.ToolCall{call1}), answer("t1.0", "ok"), answer("t1.0", "again")},
			wantIdx: 2, reason: "answered twice",
		},
		{name: "answer to an unknown call", msgs: []Message{User("u"), answer("t9.9", "ok")}, wantIdx: 1, reason: "unknown call"},
		{
			name:    "answer before its call",
			msgs:    []Message{answer("t1.0", "ok"), Assistant("", []messages.ToolCall{call1})},
			wantIdx: 0, reason: "unknown call",
		},
		{
			name:    "call id reused by a later response",
			msgs:    []Message{Assistant("", []messages.ToolCall{call1}), answer("t1.0", "ok"), Assistant("", []messages.ToolCall{call1}), answer("t1.0", "ok")},
			wantIdx: 2, reason: "used twice",
		},
		{name: "call without id", msgs: []Message{Assistant("", []messages.ToolCall{tc("", "lookup", "{}")})}, wantIdx: 0, reason: "no id"},
		{name: "unknown role", msgs: []Message{{Role: "narrator", Text: "x"}}, wantIdx: 0, reason: "unknown role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ctxOf(tt.msgs...).Validate()
			if tt.wantIdx < 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ce *ContextError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidContext) {
				t.Fatalf("Validate() = %v, want a *ContextError wrapping ErrInvalidContext", err)
			}
			if ce.Index != tt.wantIdx || !strings.Contains(ce.Reason, tt.reason) {
				t.Fatalf("Validate() = index %d %q, want index %d containing %q", ce.Index, ce.Reason, tt.wantIdx, tt.reason)
			}
		})
	}
}

func TestInterruptPendingToolCalls(t *testing.T) {
	call1 := tc("t1.0", "lookup", `{}`)
	call2 := tc("t1.1", "book", `{}`)
	tests := []struct {
		name   string
		msgs   []Message
		want   int
		wantAt []int // indices of the interrupted answers afterwards
	}{
		{name: "nothing open", msgs: []Message{User("u"), Assistant("a", nil)}},
		{
			name:   "all calls open at the end",
			msgs:   []Message{User("u"), Assistant("", []messages.ToolCall{call1, call2})},
			want:   2,
			wantAt: []int{2, 3},
		},
		{
			name:   "one answered, one open",
			msgs:   []Message{User("u"), Assistant("", []messages.ToolCall{call1, call2}), answer("t1.0", "ok")},
			want:   1,
			wantAt: []int{3},
		},
		{
			// A user message was appended before the round was closed: the
			// answer goes before it, where Validate wants it.
			name:   "open call followed by a user message",
			msgs:   []Message{Assistant("", []messages.ToolCall{call1, call2}), answer("t1.1", "ok"), User("stop")},
			want:   1,
			wantAt: []int{2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctxOf(tt.msgs...)
			snap := c.Messages()
			if got := c.InterruptPendingToolCalls("caller spoke"); got != tt.want {
				t.Fatalf("InterruptPendingToolCalls() = %d, want %d", got, tt.want)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate() after interrupt = %v\n%s", err, c.Fingerprint())
			}
			if c.Len() != len(tt.msgs)+tt.want {
				t.Fatalf("Len() = %d, want %d", c.Len(), len(tt.msgs)+tt.want)
			}
			for _, i := range tt.wantAt {
				m := c.At(i)
				if m.Role != RoleTool || !m.IsError || !strings.Contains(m.Text, `"error":"interrupted"`) || !strings.Contains(m.Text, `"detail":"caller spoke"`) {
					t.Fatalf("At(%d) = %+v, want an interrupted error result", i, m)
				}
			}
			if len(snap) != len(tt.msgs) {
				t.Fatalf("an earlier snapshot changed")
			}
		})
	}
}

func TestInterruptNamesTheTool(t *testing.T) {
	c := ctxOf(Assistant("", []messages.ToolCall{tc("t1.0", "book", "{}")}))
	c.InterruptPendingToolCalls("")
	want := `{"error":"interrupted","tool":"book","detail":"the call was interrupted before it finished; its outcome is not known"}`
	if got := c.At(1).Text; got != want {
		t.Fatalf("content = %s, want %s", got, want)
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{name: "empty", want: 0},
		{name: "framing only", msgs: []Message{User("")}, want: 4},
		{name: "text bytes over four", msgs: []Message{User("12345678")}, want: 2 + 4},
		{name: "multi-byte text counts bytes", msgs: []Message{User("ééé")}, want: 6/4 + 4},
		{
			name: "call name and arguments count",
			msgs: []Message{Assistant("abcd", []messages.ToolCall{tc("t1.0", "look", `{"a":1}`)})},
			want: (4+4+7)/4 + 4,
		},
		{name: "tool content counts", msgs: []Message{answer("t1.0", "0123456789ab")}, want: 3 + 4},
		{name: "per message", msgs: []Message{User("abc"), User("abc")}, want: 4 + 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ctxOf(tt.msgs...).EstimateTokens(); got != tt.want {
				t.Fatalf("EstimateTokens() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	tests := []struct {
		name string
		a, b []Message
		same bool
	}{
		{
			name: "argument whitespace does not matter",
			a:    []Message{Assistant("", []messages.ToolCall{tc("t1.0", "book", `{"a": 1}`)})},
			b:    []Message{Assistant("", []messages.ToolCall{tc("t1.0", "book", `{"a":1}`)})},
			same: true,
		},
		{name: "text differs", a: []Message{User("a")}, b: []Message{User("b")}},
		{name: "error flag differs", a: []Message{answer("x", "c")}, b: []Message{{Role: RoleTool, ToolCallID: "x", Text: "c", IsError: true}}},
		{name: "newline in text cannot fake a line", a: []Message{User("a\nuser|b")}, b: []Message{User("a"), User("b")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, fb := ctxOf(tt.a...).Fingerprint(), ctxOf(tt.b...).Fingerprint()
			if (fa == fb) != tt.same {
				t.Fatalf("fingerprints equal = %v, want %v\n%s\n%s", fa == fb, tt.same, fa, fb)
			}
		})
	}
	got := ctxOf(User("hi"), Assistant("ok", []messages.ToolCall{tc("t1.0", "look", `{"q": "x"}`)}), answer("t1.0", "done")).Fingerprint()
	want := "user|\"hi\"|||false\n" +
		"assistant|\"ok\"|t1.0 look \"{\\\"q\\\":\\\"x\\\"}\"||false\n" +
		"tool|\"done\"||t1.0|false\n"
	if got != want {
		t.Fatalf("Fingerprint() =\n%s\nwant\n%s", got, want)
	}
}

// Catches Truncate resetting the id sequence: an id of a discarded
// speculation's call minted again would give two calls one idempotency key.
// (Mutation seen failing: c.turn, c.seq = 0, 0 in Truncate.)
func TestTruncateDropsMessagesAndKeepsIDs(t *testing.T) {
	c := NewContext("sys")
	c.Append(User("hello"))
	n := c.Len()
	c.Append(User("book it"))
	first := c.NextToolCallIDs(3, 2)
	c.Append(Assistant("", []messages.ToolCall{{ID: first[0], Name: "x"}, {ID: first[1], Name: "x"}}))
	c.Truncate(n)
	if c.Len() != n || c.At(n-1).Text != "hello" {
		t.Fatalf("after truncate: %d messages, last %+v", c.Len(), c.At(c.Len()-1))
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if next := c.NextToolCallIDs(3, 1); next[0] != "t3.2" {
		t.Fatalf("next id after truncate = %s, want t3.2", next[0])
	}
	c.Truncate(99) // past the end: nothing happens
	if c.Len() != n {
		t.Fatalf("truncate past the end changed the length to %d", c.Len())
	}
}
