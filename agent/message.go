package agent

import "github.com/brisvox/brisvox/messages"

// Role says who a Message is from.
type Role string

// The four roles of the conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation context. Which fields are used
// depends on Role: System and User use Text; Assistant uses Text, ToolCalls
// and ProviderData; Tool uses ToolCallID, Text (the result content) and
// IsError.
type Message struct {
	Role         Role
	Text         string
	ToolCalls    []messages.ToolCall
	ProviderData []byte
	ToolCallID   string
	IsError      bool
}

// System makes a system message.
func System(text string) Message { return Message{Role: RoleSystem, Text: text} }

// User makes a user message.
func User(text string) Message { return Message{Role: RoleUser, Text: text} }

// Assistant makes an assistant message.
func Assistant(text string, calls []messages.ToolCall) Message {
	return Message{Role: RoleAssistant, Text: text, ToolCalls: calls}
}

// ToolMessage makes the answer to one tool call.
func ToolMessage(r messages.ToolResult) Message {
	return Message{Role: RoleTool, ToolCallID: r.CallID, Text: r.Content, IsError: r.IsError}
}
