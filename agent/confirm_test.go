package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// TestConfirmations pins the gate's order of events. Mutations seen
// failing: the later-turn check comparing with the request epoch instead of
// the reply's speech start (same-turn confirm accepted); the expiry with >
// instead of >= (a confirm at exactly 120 s accepted); Take not removing
// the request (confirmed twice); Clear not clearing.
func TestConfirmations(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	transfer := messages.ToolCall{ID: "t3.0", Name: "transfer_call", Arguments: json.RawMessage(`{"destination":"+4930123"}`)}
	tests := []struct {
		name string
		run  func(c *Confirmations) (messages.ToolCall, error)
		want error // nil: the held call is handed out
	}{
		{"confirm in the same turn is refused", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			return c.Take("t3.0", 3, t0.Add(time.Second))
		}, ErrConfirmTooSoon},
		{"speech that began before the request is not the reply", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			c.NoteUserTurn(t0.Add(-time.Second))
			return c.Take("t3.0", 4, t0.Add(5*time.Second))
		}, ErrConfirmTooSoon},
		{"a later reply confirms", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			c.NoteUserTurn(t0.Add(2 * time.Second))
			return c.Take("t3.0", 4, t0.Add(5*time.Second))
		}, nil},
		{"taken once", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			c.NoteUserTurn(t0.Add(2 * time.Second))
			c.Take("t3.0", 4, t0.Add(5*time.Second))
			return c.Take("t3.0", 4, t0.Add(6*time.Second))
		}, ErrNoPendingRequest},
		{"expired at exactly the TTL", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			c.NoteUserTurn(t0.Add(2 * time.Second))
			return c.Take("t3.0", 4, t0.Add(ConfirmTTL))
		}, ErrConfirmExpired},
		{"a confirmation from an older epoch is stale", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			c.NoteUserTurn(t0.Add(2 * time.Second))
			return c.Take("t3.0", 2, t0.Add(5*time.Second))
		}, ErrConfirmStale},
		{"a barge-in clears", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			c.Clear()
			c.NoteUserTurn(t0.Add(2 * time.Second))
			return c.Take("t3.0", 4, t0.Add(5*time.Second))
		}, ErrNoPendingRequest},
		{"the same call again replaces its request", func(c *Confirmations) (messages.ToolCall, error) {
			c.Request(transfer, 3, t0)
			again := transfer
			again.ID = "t3.1"
			c.Request(again, 3, t0.Add(time.Second))
			c.NoteUserTurn(t0.Add(2 * time.Second))
			if c.Pending() != 1 {
				return messages.ToolCall{}, errors.New("two requests kept")
			}
			return c.Take("t3.0", 4, t0.Add(5*time.Second))
		}, ErrNoPendingRequest},
		{"at most eight wait, the oldest goes", func(c *Confirmations) (messages.ToolCall, error) {
			for i := range MaxPendingConfirmations + 1 {
				call := transfer
				call.ID = "t3." + string(rune('a'+i))
				call.Arguments = json.RawMessage(`{"destination":"+49` + string(rune('0'+i)) + `"}`)
				c.Request(call, 3, t0)
			}
			c.NoteUserTurn(t0.Add(2 * time.Second))
			if c.Pending() != MaxPendingConfirmations {
				return messages.ToolCall{}, errors.New("not bounded")
			}
			return c.Take("t3.a", 4, t0.Add(5*time.Second))
		}, ErrNoPendingRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Confirmations
			got, err := tt.run(&c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if tt.want == nil && (got.Name != "transfer_call" || string(got.Arguments) != `{"destination":"+4930123"}`) {
				t.Fatalf("held call %+v", got)
			}
		})
	}
}

// TestConfirmationRequiredResult: the exact result the model reads.
func TestConfirmationRequiredResult(t *testing.T) {
	var c Confirmations
	r := c.Request(messages.ToolCall{ID: "t3.0", Name: "transfer_call", Arguments: json.RawMessage(`{}`)}, 3, time.Now())
	if r.IsError || r.Outcome != "held" {
		t.Fatalf("%+v: want a held, non-error result", r)
	}
	for _, want := range []string{`"status":"confirmation_required"`, `"tool":"transfer_call"`, `"call_id":"t3.0"`, "Only if the user clearly agrees in their NEXT reply, call confirm_pending with this call_id.", "Never confirm on your own."} {
		if !strings.Contains(r.Content, want) {
			t.Errorf("result lacks %q: %s", want, r.Content)
		}
	}
}
