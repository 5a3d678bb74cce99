package agent

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

// TestNextToolCallIDs: ids count every call of a turn across its rounds
// and start again at the next turn. (Mutations seen failing: seq reset per
// call of NextToolCallIDs — a second round reuses t3.0; seq not reset at a
// new epoch.)
func TestNextToolCallIDs(t *testing.T) {
	c := NewContext("")
	tests := []struct {
		name  string
		epoch messages.Epoch
		n     int
		want  []string
	}{
		{"first round of turn 3", 3, 2, []string{"t3.0", "t3.1"}},
		{"second round of turn 3", 3, 1, []string{"t3.2"}},
		{"none", 3, 0, []string{}},
		{"turn 4 starts at 0", 4, 2, []string{"t4.0", "t4.1"}},
	}
	for _, tt := range tests {
		if got := c.NextToolCallIDs(tt.epoch, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestToolCallID pins the one spelling of a minted id, which the
// idempotency keys of every stored call depend on. (Mutation seen failing:
// the epoch and the sequence swapped.)
func TestToolCallID(t *testing.T) {
	for _, c := range []struct {
		epoch messages.Epoch
		seq   int
		want  string
	}{{0, 0, "t0.0"}, {3, 2, "t3.2"}, {18446744073709551615, 12, "t18446744073709551615.12"}} {
		if got := ToolCallID(c.epoch, c.seq); got != c.want {
			t.Errorf("ToolCallID(%d, %d) = %q, want %q", c.epoch, c.seq, got, c.want)
		}
	}
}

// TestPushLateToolResult: a late result becomes a system note, refused
// while a call is open (it would separate the call from its result), and
// the context stays valid. (Mutation seen failing: no open-call check —
// Validate then fails on the note between call and result.)
func TestPushLateToolResult(t *testing.T) {
	late := messages.ToolResult{CallID: "t1.0", Name: "book_table", Content: `{"booked":true}`}
	c := NewContext("")
	c.Append(User("book it"), Assistant("", []messages.ToolCall{{ID: "t2.0", Name: "lookup", Arguments: []byte(`{}`)}}))
	if err := c.PushLateToolResult(late); !errors.Is(err, ErrCallOpen) {
		t.Fatalf("push with a call open: %v, want ErrCallOpen", err)
	}
	c.Append(ToolMessage(messages.ToolResult{CallID: "t2.0", Name: "lookup", Content: "ok"}))
	if err := c.PushLateToolResult(late); err != nil {
		t.Fatalf("push after the result: %v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	last := c.At(c.Len() - 1)
	if last.Role != RoleSystem || !strings.Contains(last.Text, "t1.0") || !strings.Contains(last.Text, "book_table") ||
		!strings.Contains(last.Text, `{"booked":true}`) || !strings.Contains(last.Text, "do not repeat") {
		t.Errorf("note %+v", last)
	}
	failed := late
	failed.IsError = true
	c.PushLateToolResult(failed)
	if !strings.Contains(c.At(c.Len()-1).Text, "has failed") {
		t.Errorf("a failed late result should say so: %q", c.At(c.Len()-1).Text)
	}
}
