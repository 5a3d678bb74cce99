package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// NotePrefix starts the user text block a late system message becomes.
const NotePrefix = "[system note] "

// OpeningNote is the user turn put before a conversation that starts with
// the assistant (the agent greeted the caller first): the API wants the
// first message to be the user's.
const OpeningNote = NotePrefix + "the call has started"

// Wire shapes of the request body.
type (
	wireRequest struct {
		Model       string        `json:"model"`
		MaxTokens   int           `json:"max_tokens"`
		System      string        `json:"system,omitempty"`
		Messages    []wireTurn    `json:"messages"`
		Tools       []wireTool    `json:"tools,omitempty"`
		Stream      bool          `json:"stream"`
		Temperature *float64      `json:"temperature,omitempty"`
		Thinking    *wireThinking `json:"thinking,omitempty"`
	}
	wireThinking struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	}
	wireTurn struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	wireText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	wireToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	wireToolResult struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content,omitempty"`
		IsError   bool   `json:"is_error,omitempty"`
	}
	wireTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

// emptySchema stands in for a tool without a parameter schema: the API
// wants an object schema.
const emptySchema = `{"type":"object","properties":{}}`

// turn is a message being built: its role, its blocks, and how many of
// them lead (thinking blocks of an assistant turn, tool results of a user
// turn), so later ones of the same kind go after them and before the rest.
type turn struct {
	role   string
	blocks []json.RawMessage
	lead   int
}

// add appends blocks to the turn of role, starting a new turn when the
// last one is of the other role; lead blocks go after the turn's lead.
func add(turns []turn, role string, lead bool, blocks ...json.RawMessage) []turn {
	if len(blocks) == 0 {
		return turns
	}
	if len(turns) == 0 || turns[len(turns)-1].role != role {
		turns = append(turns, turn{role: role})
	}
	t := &turns[len(turns)-1]
	if lead {
		t.blocks = slices.Concat(t.blocks[:t.lead], blocks, t.blocks[t.lead:])
		t.lead += len(blocks)
	} else {
		t.blocks = append(t.blocks, blocks...)
	}
	return turns
}

// mustJSON encodes a wire block (the shapes above always encode).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // unreachable: plain structs of strings and raw JSON
	}
	return b
}

// textBlock is a text block, none when s is empty.
func textBlock(s string) []json.RawMessage {
	if s == "" {
		return nil
	}
	return []json.RawMessage{mustJSON(wireText{Type: "text", Text: s})}
}

// ToolUseID is the id a tool_use block carries for the engine call id:
// the API takes [A-Za-z0-9_-] only and engine ids hold a dot, so every
// other byte, and the underscore itself, is escaped as _XX (hex): distinct
// ids stay distinct.
func ToolUseID(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02X", c)
		}
	}
	return b.String()
}

// buildBody encodes req as a streaming Messages API request; see the
// package documentation for the mapping of the conversation.
func buildBody(cfg *Config, req *providers.Request) ([]byte, error) {
	w := wireRequest{
		Model:       cfg.Model,
		MaxTokens:   cfg.MaxTokens,
		Stream:      true,
		Temperature: cfg.Temperature,
	}
	if cfg.ThinkingBudget > 0 {
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: cfg.ThinkingBudget}
	}
	msgs := req.Messages
	var system []string
	for len(msgs) > 0 && msgs[0].Role == agent.RoleSystem {
		if msgs[0].Text != "" {
			system = append(system, msgs[0].Text)
		}
		msgs = msgs[1:]
	}
	w.System = strings.Join(system, "\n\n")
	var turns []turn
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case agent.RoleSystem:
			if m.Text != "" {
				turns = add(turns, "user", false, textBlock(NotePrefix+m.Text)...)
			}
		case agent.RoleUser:
			turns = add(turns, "user", false, textBlock(m.Text)...)
		case agent.RoleTool:
			turns = add(turns, "user", true, mustJSON(wireToolResult{
				Type: "tool_result", ToolUseID: ToolUseID(m.ToolCallID), Content: m.Text, IsError: m.IsError,
			}))
		case agent.RoleAssistant:
			thoughts, err := thinkingBlocks(m.ProviderData)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			// The thinking blocks go first, and only with other content:
			// alone they are not a turn.
			rest := textBlock(m.Text)
			for _, c := range m.ToolCalls {
				rest = append(rest, mustJSON(wireToolUse{Type: "tool_use", ID: ToolUseID(c.ID), Name: c.Name, Input: inputOf(c.Arguments)}))
			}
			if len(rest) == 0 {
				continue
			}
			turns = add(turns, "assistant", true, thoughts...)
			turns = add(turns, "assistant", false, rest...)
		default:
			return nil, fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	// No prefill: a trailing assistant turn is dropped.
	if n := len(turns); n > 0 && turns[n-1].role == "assistant" {
		turns = turns[:n-1]
	}
	if len(turns) == 0 {
		return nil, fmt.Errorf("the conversation has no user turn")
	}
	if turns[0].role == "assistant" {
		turns = slices.Insert(turns, 0, turn{role: "user", blocks: textBlock(OpeningNote)})
	}
	w.Messages = make([]wireTurn, len(turns))
	for i, t := range turns {
		w.Messages[i] = wireTurn{Role: t.role, Content: t.blocks}
	}
	if len(req.Tools) > 0 {
		w.Tools = make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			schema := t.Parameters
			if len(bytes.TrimSpace(schema)) == 0 {
				schema = json.RawMessage(emptySchema)
			} else if !json.Valid(schema) {
				return nil, fmt.Errorf("tool %q: the parameter schema is not JSON", t.Name)
			}
			w.Tools[i] = wireTool{Name: t.Name, Description: t.Description, InputSchema: schema}
		}
	}
	return json.Marshal(&w)
}

// inputOf is a call's input object: its arguments when they are a JSON
// object, else {} (an invalid call's arguments are {} already).
func inputOf(args json.RawMessage) json.RawMessage {
	a := bytes.TrimSpace(args)
	if len(a) == 0 || a[0] != '{' || !json.Valid(a) {
		return json.RawMessage("{}")
	}
	return a
}

// thinkingBlocks are the blocks of an assistant message's provider data,
// verbatim; none without data. Data that is not this adapter's blob is an
// error.
func thinkingBlocks(data []byte) ([]json.RawMessage, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || string(d) == "null" {
		return nil, nil
	}
	var pd providerData
	if err := json.Unmarshal(d, &pd); err != nil || pd.Thinking == nil {
		return nil, fmt.Errorf("provider data is not a thinking blob")
	}
	for _, b := range pd.Thinking {
		if len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("provider data holds a thinking block that is not an object")
		}
	}
	return pd.Thinking, nil
}
