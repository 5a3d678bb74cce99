package agent

import (
	"encoding/json"

	"github.com/brisvox/brisvox/messages"
)

// tc makes a tool call for tests.
func tc(id, name, args string) messages.ToolCall {
	return messages.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// answer makes a successful tool message for call id.
func answer(id, content string) Message {
	return ToolMessage(messages.ToolResult{CallID: id, Content: content})
}

// ctxOf makes a context holding msgs, with no system prompt.
func ctxOf(msgs ...Message) *Context {
	c := NewContext("")
	c.Append(msgs...)
	return c
}
