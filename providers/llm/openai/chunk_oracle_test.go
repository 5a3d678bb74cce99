package openai

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/httpx"
)

// Wire shapes of one streamed chunk. Fields the adapter does not use are
// not declared, so the decoder skips them without allocating.
type (
	wireChunk struct {
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage"`
		Error   *wireError   `json:"error"`
	}
	wireChoice struct {
		Index        int       `json:"index"`
		Delta        wireDelta `json:"delta"`
		FinishReason string    `json:"finish_reason"`
	}
	wireDelta struct {
		Content   string          `json:"content"`
		ToolCalls []wireDeltaCall `json:"tool_calls"`
	}
	wireDeltaCall struct {
		Index    int    `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireUsage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	wireError struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
)

// oracleDecoder is the adapter's first decoder, on encoding/json, kept as
// the oracle of the differential fuzz target: the Scanner decoder must
// give the same events and the same kinds of error.
type oracleDecoder struct {
	chunk  wireChunk
	events []providers.LLMEvent
	finish string // the last finish_reason seen
	key    string // redacted from error details
}

// decode appends the events of one chunk's JSON to d.events (which the
// caller empties). Text comes first, then the call fragments in their
// order, then usage. JSON that does not parse is a *providers.Protocol; an
// error object in the stream is a *providers.Rejected.
func (d *oracleDecoder) decode(data []byte) error {
	// Unmarshal leaves fields absent from the JSON as they were: start
	// from zero, keeping the capacity of the choices.
	clear(d.chunk.Choices[:cap(d.chunk.Choices)])
	d.chunk = wireChunk{Choices: d.chunk.Choices[:0]}
	if err := json.Unmarshal(data, &d.chunk); err != nil {
		return &providers.Protocol{Detail: "chunk is not valid JSON: " + err.Error()}
	}
	if e := d.chunk.Error; e != nil {
		status := 500 // an error in a stream that began well: the server's
		if n, err := strconv.Atoi(string(e.Code)); err == nil && n >= 400 && n <= 599 {
			status = n
		}
		return &providers.Rejected{Status: status, Detail: httpx.Excerpt([]byte(e.Message), d.key)}
	}
	for i := range d.chunk.Choices {
		c := &d.chunk.Choices[i]
		if c.Index != 0 {
			continue // one answer is asked for; others are not ours
		}
		if c.Delta.Content != "" {
			d.events = append(d.events, providers.LLMEvent{Kind: providers.LLMText, Text: c.Delta.Content})
		}
		for j := range c.Delta.ToolCalls {
			tc := &c.Delta.ToolCalls[j]
			if tc.Index < 0 {
				return &providers.Protocol{Detail: fmt.Sprintf("tool call index %d", tc.Index)}
			}
			d.events = append(d.events, providers.LLMEvent{
				Kind: providers.LLMToolCall, Index: tc.Index, ID: tc.ID,
				Name: tc.Function.Name, Args: tc.Function.Arguments,
			})
		}
		if c.FinishReason != "" {
			d.finish = c.FinishReason
		}
	}
	if u := d.chunk.Usage; u != nil {
		ev := providers.LLMEvent{Kind: providers.LLMUsage}
		ev.Usage.InputTokens, ev.Usage.OutputTokens = u.PromptTokens, u.CompletionTokens
		if u.PromptTokensDetails != nil {
			ev.Usage.CachedInputTokens = u.PromptTokensDetails.CachedTokens
		}
		d.events = append(d.events, ev)
	}
	return nil
}
