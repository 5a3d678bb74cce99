package anthropicmock

import (
	"encoding/json"
	"strings"
)

// event encodes one event's data (the values are plain, so it encodes).
func event(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // unreachable: maps of strings, numbers and maps
	}
	return string(b)
}

// MessageStart is the first event, with the input tokens.
func MessageStart(input int) string {
	return event(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_mock", "type": "message", "role": "assistant", "model": "mock-model",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": input, "output_tokens": 1},
	}})
}

// TextStart opens a text block.
func TextStart(index int) string {
	return event(map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
}

// TextDelta is a piece of a text block.
func TextDelta(index int, s string) string {
	return event(map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": s}})
}

// ToolStart opens a tool_use block.
func ToolStart(index int, id, name string) string {
	return event(map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
}

// InputDelta is a piece of a tool_use block's input JSON.
func InputDelta(index int, partial string) string {
	return event(map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": partial}})
}

// ThinkingStart opens a thinking block.
func ThinkingStart(index int) string {
	return event(map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
}

// ThinkingDelta is a piece of a thinking block's text.
func ThinkingDelta(index int, s string) string {
	return event(map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "thinking_delta", "thinking": s}})
}

// SignatureDelta is a thinking block's signature.
func SignatureDelta(index int, sig string) string {
	return event(map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "signature_delta", "signature": sig}})
}

// RedactedThinking opens a redacted_thinking block (closed by BlockStop).
func RedactedThinking(index int, data string) string {
	return event(map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "redacted_thinking", "data": data}})
}

// BlockStop closes a block.
func BlockStop(index int) string {
	return event(map[string]any{"type": "content_block_stop", "index": index})
}

// MessageDelta carries the stop reason (end_turn, tool_use) and the output
// tokens.
func MessageDelta(stop string, output int) string {
	return event(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}})
}

// MessageStop ends the response.
func MessageStop() string { return event(map[string]any{"type": "message_stop"}) }

// Ping is the keep-alive event.
func Ping() string { return event(map[string]any{"type": "ping"}) }

// ErrorEvent is an error inside the stream (overloaded_error, say).
func ErrorEvent(typ, msg string) string {
	return event(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// ErrorBody is the JSON body of an error status.
func ErrorBody(typ, msg string) string {
	return event(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// Text is a whole response of one text block, one delta per word (each
// with the whitespace after it).
func Text(s string) []string {
	out := []string{MessageStart(10), TextStart(0)}
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			out = append(out, TextDelta(0, w))
		}
	}
	return append(out, BlockStop(0), MessageDelta("end_turn", 5), MessageStop())
}

// typeOf is the type field of an event's data, for its event: line; empty
// when the data is not an object with one (an injected fault).
func typeOf(data string) string {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(data), &v) != nil || strings.ContainsAny(v.Type, "\r\n") {
		return ""
	}
	return v.Type
}
