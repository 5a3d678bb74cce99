package openai

import (
	"encoding/json"
	"strings"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// Wire shapes of the request body.
type (
	wireRequest struct {
		Model               string        `json:"model"`
		Messages            []wireMessage `json:"messages"`
		Tools               []wireTool    `json:"tools,omitempty"`
		Stream              bool          `json:"stream"`
		StreamOptions       streamOptions `json:"stream_options"`
		Temperature         *float64      `json:"temperature,omitempty"`
		MaxTokens           int           `json:"max_tokens,omitempty"`
		MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
		ReasoningEffort     string        `json:"reasoning_effort,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireMessage struct {
		Role string `json:"role"`
		// Content is nil only for an assistant message with tool calls and
		// no text, where the API wants it absent.
		Content    *string        `json:"content,omitempty"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	wireToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name string `json:"name"`
		// Arguments is the JSON text of the arguments, as a string.
		Arguments string `json:"arguments"`
	}
	wireTool struct {
		Type     string  `json:"type"`
		Function wireDef `json:"function"`
	}
	wireDef struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// emptySchema stands in for a tool without a parameter schema: the API
// wants an object schema.
const emptySchema = `{"type":"object","properties":{}}`

// buildBody encodes req as a streaming Chat Completions request.
//
// Tool calls carry the engine's id (messages.ToolCall.ID) and tool results
// reference it (Message.ToolCallID is the engine id of the call): the model
// only needs the two to agree, and the engine id is the one both sides of
// the context hold. The provider's own id (ProviderID) is not sent.
//
// Adjacent assistant messages are merged (texts joined with a space, calls
// concatenated) because the API expects one assistant turn before the tool
// results. System messages are kept where they are: the API accepts them
// anywhere, so late-result notes stay in place. Provider data is not sent:
// Chat Completions has no field for it.
func buildBody(cfg *Config, req *providers.Request) ([]byte, error) {
	w := wireRequest{
		Model:           cfg.Model,
		Messages:        make([]wireMessage, 0, len(req.Messages)),
		Stream:          true,
		StreamOptions:   streamOptions{IncludeUsage: true},
		Temperature:     cfg.Temperature,
		ReasoningEffort: cfg.ReasoningEffort,
	}
	if cfg.MaxTokens > 0 {
		if cfg.MaxCompletionTokens {
			w.MaxCompletionTokens = cfg.MaxTokens
		} else {
			w.MaxTokens = cfg.MaxTokens
		}
	}
	for i := 0; i < len(req.Messages); i++ {
		m := &req.Messages[i]
		switch m.Role {
		case agent.RoleAssistant:
			j := i
			for j+1 < len(req.Messages) && req.Messages[j+1].Role == agent.RoleAssistant {
				j++
			}
			if wm, ok := assistantMessage(req.Messages[i : j+1]); ok {
				w.Messages = append(w.Messages, wm)
			}
			i = j
		case agent.RoleTool:
			w.Messages = append(w.Messages, wireMessage{Role: "tool", Content: ptr(m.Text), ToolCallID: m.ToolCallID})
		default: // system, user
			w.Messages = append(w.Messages, wireMessage{Role: string(m.Role), Content: ptr(m.Text)})
		}
	}
	if len(req.Tools) > 0 {
		w.Tools = make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = json.RawMessage(emptySchema)
			}
			w.Tools[i] = wireTool{Type: "function", Function: wireDef{Name: t.Name, Description: t.Description, Parameters: params}}
		}
	}
	return json.Marshal(&w)
}

// assistantMessage merges a run of assistant messages into one. There is
// none when the run has neither text nor calls (the API refuses an empty
// assistant message).
func assistantMessage(run []agent.Message) (wireMessage, bool) {
	var texts []string
	var calls []wireToolCall
	for _, m := range run {
		if m.Text != "" {
			texts = append(texts, m.Text)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Arguments)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			calls = append(calls, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: args}})
		}
	}
	if len(texts) == 0 && len(calls) == 0 {
		return wireMessage{}, false
	}
	wm := wireMessage{Role: "assistant", ToolCalls: calls}
	if len(texts) > 0 {
		wm.Content = ptr(strings.Join(texts, " "))
	}
	return wm, true
}

func ptr(s string) *string { return &s }
