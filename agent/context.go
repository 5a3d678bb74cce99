package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/messages"
)

// Context is the conversation of one call: the messages sent to the model on
// every request. It is not safe for concurrent use: one actor (the llm
// actor) owns it, and hands copies (Messages) to the requests it starts.
//
// Context methods never modify a message's inner slices (ToolCalls,
// ProviderData) in place; they replace messages instead, so a copy taken for
// a request in flight never sees later changes.
type Context struct {
	msgs []Message
	// turn and seq mint tool-call ids: seq counts every call of the turn
	// (epoch) across its tool rounds, so (session, epoch, id) never names
	// two calls.
	turn messages.Epoch
	seq  int
}

// NewContext starts a conversation with the system prompt. An empty system
// prompt adds no message, since providers reject or bill an empty one.
func NewContext(system string) *Context {
	c := &Context{}
	if system != "" {
		c.msgs = append(c.msgs, System(system))
	}
	return c
}

// Append adds messages at the end. It does not validate: a context is
// legitimately incomplete while a tool round runs (calls not yet answered);
// call Validate before a request.
func (c *Context) Append(m ...Message) {
	c.msgs = append(c.msgs, m...)
}

// Messages returns a copy of the message list, so a request in flight keeps
// the conversation as it was when the request started.
func (c *Context) Messages() []Message {
	return slices.Clone(c.msgs)
}

// Truncate drops the messages from index n on: a discarded speculation
// takes back what it added (its user message, its rounds), so the context
// holds only what was committed. It keeps the id sequence: an id minted
// for a dropped call is never minted again. n past the end is a no-op; a
// negative n panics, like a slice index (an index comes from Len).
func (c *Context) Truncate(n int) {
	if n >= len(c.msgs) {
		return
	}
	clear(c.msgs[n:])
	c.msgs = c.msgs[:n]
}

// Len is the number of messages.
func (c *Context) Len() int { return len(c.msgs) }

// At returns the message at index i. It panics when i is out of range, like
// a slice index: an index comes from Len, never from outside input.
func (c *Context) At(i int) Message { return c.msgs[i] }

// Validate checks the ordering rules every provider enforces, so a broken
// context is caught here with an index instead of as a 400 from the
// provider mid-call:
//   - every assistant tool call has a non-empty id, unique in the context;
//   - every call is answered exactly once by a tool message with its id,
//     after its assistant message and before any other non-tool message
//     (results in any order among themselves);
//   - a tool message answers a known, earlier, still unanswered call;
//   - no assistant message is empty (no text and no calls; provider data
//     alone does not count).
//
// The error is a *ContextError wrapping ErrInvalidContext.
func (c *Context) Validate() error {
	seen := make(map[string]bool)     // every call id so far
	answered := make(map[string]bool) // call ids with a tool message
	var open []string                 // ids of the latest assistant message still unanswered
	openAt := -1                      // index of that assistant message
	for i, m := range c.msgs {
		if m.Role != RoleTool && len(open) > 0 {
			return &ContextError{Index: i, Reason: fmt.Sprintf("%s message before the answer to call %q of message %d", m.Role, open[0], openAt)}
		}
		switch m.Role {
		case RoleSystem, RoleUser:
		case RoleAssistant:
			if m.Text == "" && len(m.ToolCalls) == 0 {
				return &ContextError{Index: i, Reason: "empty assistant message (no text and no tool calls)"}
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return &ContextError{Index: i, Reason: fmt.Sprintf("tool call %q has no id", tc.Name)}
				}
				if seen[tc.ID] {
					return &ContextError{Index: i, Reason: fmt.Sprintf("tool call id %q is used twice", tc.ID)}
				}
				seen[tc.ID] = true
				open = append(open, tc.ID)
			}
			openAt = i
		case RoleTool:
			switch {
			case answered[m.ToolCallID]:
				return &ContextError{Index: i, Reason: fmt.Sprintf("call %q is answered twice", m.ToolCallID)}
			case !seen[m.ToolCallID]:
				return &ContextError{Index: i, Reason: fmt.Sprintf("tool message answers unknown call %q", m.ToolCallID)}
			}
			// A known, unanswered call is always open: its window can only
			// close with a non-tool message, which is reported above.
			answered[m.ToolCallID] = true
			open = slices.DeleteFunc(open, func(id string) bool { return id == m.ToolCallID })
		default:
			return &ContextError{Index: i, Reason: fmt.Sprintf("unknown role %q", m.Role)}
		}
	}
	if len(open) > 0 {
		return &ContextError{Index: openAt, Reason: fmt.Sprintf("call %q is not answered", open[0])}
	}
	return nil
}

// InterruptPendingToolCalls answers every unanswered tool call with an
// interrupted error result, so the context validates again after a round
// was cut (barge-in, a discarded speculation, a failed round). detail is
// the detail of the error body; empty means a default sentence. The answers
// go right after the tool messages that follow their assistant message, in
// the order of the calls. It returns the number of calls it answered.
func (c *Context) InterruptPendingToolCalls(detail string) int {
	if detail == "" {
		detail = "the call was interrupted before it finished; its outcome is not known"
	}
	answered := make(map[string]bool)
	for _, m := range c.msgs {
		if m.Role == RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var out []Message
	n := 0
	for i := 0; i < len(c.msgs); {
		m := c.msgs[i]
		out = append(out, m)
		i++
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		for i < len(c.msgs) && c.msgs[i].Role == RoleTool {
			out = append(out, c.msgs[i])
			i++
		}
		for _, tc := range m.ToolCalls {
			if answered[tc.ID] {
				continue
			}
			answered[tc.ID] = true
			out = append(out, Message{
				Role:       RoleTool,
				ToolCallID: tc.ID,
				Text:       ErrorContent(KindInterrupted, tc.Name, detail),
				IsError:    true,
			})
			n++
		}
	}
	if n > 0 {
		c.msgs = out
	}
	return n
}

// NextToolCallIDs mints n tool-call ids of the turn epoch: t<epoch>.<seq>,
// where seq counts every call of the turn across its rounds. The provider's
// own id stays in ToolCall.ProviderID. The idempotency key (session, epoch,
// call id) relies on an id never being minted twice.
func (c *Context) NextToolCallIDs(epoch messages.Epoch, n int) []string {
	if epoch != c.turn {
		c.turn, c.seq = epoch, 0
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = ToolCallID(epoch, c.seq)
		c.seq++
	}
	return ids
}

// ToolCallID is the id of the seq-th tool call of the turn epoch,
// t<epoch>.<seq>: the one spelling of a minted id, for the round that
// mints them and for NextToolCallIDs.
func ToolCallID(epoch messages.Epoch, seq int) string {
	b := make([]byte, 0, 24)
	b = append(b, 't')
	b = strconv.AppendUint(b, uint64(epoch), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(seq), 10)
	return string(b)
}

// OpenToolCalls counts the calls that have no result yet. A note must not
// be pushed while one is open: it would separate a call from its result.
func (c *Context) OpenToolCalls() int {
	open := 0
	for _, m := range c.msgs {
		switch m.Role {
		case RoleAssistant:
			open += len(m.ToolCalls)
		case RoleTool:
			open--
		}
	}
	return max(open, 0)
}

// PushLateToolResult reports the result of a SideEffect call whose round
// was gone when it finished (interrupted, timed out, or its execution was
// dropped) as a system note, so the model learns what happened and does not
// repeat the action. It refuses (ErrCallOpen) while a call is open; the
// caller keeps the note until the round's results are in.
func (c *Context) PushLateToolResult(r messages.ToolResult) error {
	if n := c.OpenToolCalls(); n > 0 {
		return fmt.Errorf("%w: %d open", ErrCallOpen, n)
	}
	status := "finished"
	if r.IsError {
		status = "failed"
	}
	c.msgs = append(c.msgs, System(fmt.Sprintf(
		"Late result: the earlier call %s of tool %s (interrupted or timed out before) has %s; do not repeat it. Result: %s",
		r.CallID, r.Name, status, r.Content)))
	return nil
}

// EstimateTokens is a rough size of the context in tokens, for trimming
// decisions without a provider's tokenizer: each message counts its bytes
// (text, tool call names and arguments, tool content) divided by 4, plus 4
// for the per-message framing every provider adds.
func (c *Context) EstimateTokens() int {
	total := 0
	for _, m := range c.msgs {
		total += EstimateMessageTokens(m)
	}
	return total
}

// EstimateMessageTokens is the estimate of one message used by
// EstimateTokens, exposed so a caller can weigh a message before adding
// it.
func EstimateMessageTokens(m Message) int {
	n := len(m.Text)
	for _, tc := range m.ToolCalls {
		n += len(tc.Name) + len(tc.Arguments)
	}
	return n/4 + 4
}

// Fingerprint is a stable, compact text form of the context, one line per
// message (role|text|calls|tool call id|is_error, text and arguments
// quoted), so tests can compare two runs with a plain string comparison.
// Arguments are compacted, so whitespace from different providers does not
// differ; key order is kept. Provider data is left out: it is opaque.
func (c *Context) Fingerprint() string {
	var b strings.Builder
	for _, m := range c.msgs {
		b.WriteString(string(m.Role))
		b.WriteByte('|')
		b.WriteString(strconv.Quote(m.Text))
		b.WriteByte('|')
		for j, tc := range m.ToolCalls {
			if j > 0 {
				b.WriteByte(';')
			}
			b.WriteString(tc.ID)
			b.WriteByte(' ')
			b.WriteString(tc.Name)
			b.WriteByte(' ')
			b.WriteString(strconv.Quote(compactJSON(tc.Arguments)))
		}
		b.WriteByte('|')
		b.WriteString(m.ToolCallID)
		b.WriteByte('|')
		b.WriteString(strconv.FormatBool(m.IsError))
		b.WriteByte('\n')
	}
	return b.String()
}
