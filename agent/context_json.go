package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/brisvox/brisvox/messages"
)

// messageJSON is the stored form of one message, tagged by role. Each role
// writes only the fields it uses, so a stored conversation reads like the
// union it is: {"role":"assistant","text":...,"tool_calls":[...]},
// {"role":"tool","call_id":...,"content":...,"is_error":true}.
type messageJSON struct {
	Role         Role           `json:"role"`
	Text         string         `json:"text,omitempty"`
	ToolCalls    []toolCallJSON `json:"tool_calls,omitempty"`
	ProviderData []byte         `json:"provider_data,omitempty"`
	CallID       string         `json:"call_id,omitempty"`
	Content      string         `json:"content,omitempty"`
	IsError      bool           `json:"is_error,omitempty"`
}

type toolCallJSON struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// MarshalJSON writes the context as a JSON array of role-tagged messages.
// Arguments are embedded as JSON, so arguments that are not valid JSON are
// an error here rather than a corrupt transcript.
func (c *Context) MarshalJSON() ([]byte, error) {
	out := make([]messageJSON, 0, len(c.msgs))
	for i, m := range c.msgs {
		j := messageJSON{Role: m.Role}
		switch m.Role {
		case RoleSystem, RoleUser:
			j.Text = m.Text
		case RoleAssistant:
			j.Text = m.Text
			j.ProviderData = m.ProviderData
			for _, tc := range m.ToolCalls {
				j.ToolCalls = append(j.ToolCalls, toolCallJSON{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
			}
		case RoleTool:
			j.CallID = m.ToolCallID
			j.Content = m.Text
			j.IsError = m.IsError
		default:
			return nil, fmt.Errorf("%w: message %d: %q", ErrUnknownRole, i, m.Role)
		}
		out = append(out, j)
	}
	return json.Marshal(out)
}

// UnmarshalJSON replaces the context with the messages of data (the form
// MarshalJSON writes; null means empty). An unknown role, or a field its
// role does not use, is an error wrapping ErrUnknownRole, so a transcript
// from another format is refused rather than half read. It does not
// Validate: a stored context may be mid-round.
func (c *Context) UnmarshalJSON(data []byte) error {
	var in []messageJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("agent: context JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("agent: context JSON: data after the message list")
	}
	msgs := make([]Message, 0, len(in))
	for i, j := range in {
		m, err := j.message()
		if err != nil {
			return fmt.Errorf("%w: message %d: %v", ErrUnknownRole, i, err)
		}
		msgs = append(msgs, m)
	}
	c.msgs = msgs
	return nil
}

func (j messageJSON) message() (Message, error) {
	toolFields := j.CallID != "" || j.Content != "" || j.IsError
	assistantFields := len(j.ToolCalls) > 0 || len(j.ProviderData) > 0
	switch j.Role {
	case RoleSystem, RoleUser:
		if toolFields || assistantFields {
			return Message{}, fmt.Errorf("role %q with tool or assistant fields", j.Role)
		}
		return Message{Role: j.Role, Text: j.Text}, nil
	case RoleAssistant:
		if toolFields {
			return Message{}, fmt.Errorf("role %q with tool fields", j.Role)
		}
		m := Message{Role: RoleAssistant, Text: j.Text, ProviderData: j.ProviderData}
		for _, tc := range j.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, messages.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		return m, nil
	case RoleTool:
		if j.Text != "" || assistantFields {
			return Message{}, fmt.Errorf("role %q with text or assistant fields", j.Role)
		}
		return Message{Role: RoleTool, ToolCallID: j.CallID, Text: j.Content, IsError: j.IsError}, nil
	default:
		return Message{}, fmt.Errorf("role %q", j.Role)
	}
}

// compactJSON returns raw without insignificant whitespace, or raw as is
// when it is not valid JSON, for stable fingerprints.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
