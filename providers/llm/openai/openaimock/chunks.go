package openaimock

import "encoding/json"

// Frag is one streamed fragment of a tool call.
type Frag struct {
	Index int
	// ID and Name go on the first fragment of a call. With Empty set, the
	// fragment carries "id":"" and "name":"" anyway, as some servers
	// repeat empty fields on every later fragment.
	ID, Name string
	Args     string
	Empty    bool
}

type wireFunc struct {
	Name      *string `json:"name,omitempty"`
	Arguments string  `json:"arguments"`
}

type wireCall struct {
	Index    int      `json:"index"`
	ID       *string  `json:"id,omitempty"`
	Type     string   `json:"type,omitempty"`
	Function wireFunc `json:"function"`
}

type wireDelta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content"`
	ToolCalls []wireCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireChunk struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   any          `json:"usage"`
}

func chunk(choices []wireChoice, usage any) string {
	if choices == nil {
		choices = []wireChoice{}
	}
	b, err := json.Marshal(wireChunk{ID: "chatcmpl-mock", Object: "chat.completion.chunk", Created: 1700000000, Model: "mock-model", Choices: choices, Usage: usage})
	if err != nil {
		panic(err) // the shapes above always encode
	}
	return string(b)
}

// TextChunk is a chunk with one text delta, as the real service sends it.
func TextChunk(s string) string {
	return chunk([]wireChoice{{Delta: wireDelta{Content: &s}}}, nil)
}

// ToolChunk is a chunk with the given call fragments (content null).
func ToolChunk(frags ...Frag) string {
	calls := make([]wireCall, len(frags))
	for i, f := range frags {
		c := wireCall{Index: f.Index, Function: wireFunc{Arguments: f.Args}}
		if f.ID != "" || f.Empty {
			id := f.ID
			c.ID = &id
		}
		if f.ID != "" {
			c.Type = "function"
		}
		if f.Name != "" || f.Empty {
			name := f.Name
			c.Function.Name = &name
		}
		calls[i] = c
	}
	return chunk([]wireChoice{{Delta: wireDelta{ToolCalls: calls}}}, nil)
}

// FinishChunk is the chunk with the finish reason (stop, tool_calls).
func FinishChunk(reason string) string {
	return chunk([]wireChoice{{FinishReason: &reason}}, nil)
}

// UsageChunk is the last chunk of include_usage: no choices, the usage.
func UsageChunk(prompt, completion, cached int) string {
	return chunk(nil, map[string]any{
		"prompt_tokens":         prompt,
		"completion_tokens":     completion,
		"total_tokens":          prompt + completion,
		"prompt_tokens_details": map[string]any{"cached_tokens": cached},
	})
}
