package geminimock

import (
	"encoding/json"
	"strings"
)

// chunk encodes one chunk (the values are plain, so it encodes).
func chunk(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // unreachable: maps of strings, numbers and maps
	}
	return string(b)
}

// Part is one part of a model content, for Chunk.
type Part struct {
	// Text is a text part (with Thought: a thought summary).
	Text    string
	Thought bool
	// Call, when Name is set, is a functionCall part: ID (omitted when
	// empty), Name and Args (a JSON object; "" sends {}).
	ID, Name, Args string
	// Signature is the part's thoughtSignature (omitted when empty).
	Signature string
}

// Chunk is a GenerateContentResponse with these parts in candidate 0.
func Chunk(parts ...Part) string {
	ps := make([]any, len(parts))
	for i, p := range parts {
		m := map[string]any{}
		if p.Name != "" {
			args := p.Args
			if args == "" {
				args = "{}"
			}
			fc := map[string]any{"name": p.Name, "args": json.RawMessage(args)}
			if p.ID != "" {
				fc["id"] = p.ID
			}
			m["functionCall"] = fc
		} else {
			m["text"] = p.Text
			if p.Thought {
				m["thought"] = true
			}
		}
		if p.Signature != "" {
			m["thoughtSignature"] = p.Signature
		}
		ps[i] = m
	}
	return chunk(map[string]any{
		"candidates":   []any{map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}},
		"modelVersion": "mock-model",
	})
}

// TextChunk is a chunk of one text part.
func TextChunk(s string) string { return Chunk(Part{Text: s}) }

// Finish is the last chunk: an empty text part, the finishReason ("STOP",
// "MAX_TOKENS", ...) and the usage.
func Finish(reason string, prompt, candidates, cached int) string {
	u := map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": candidates, "totalTokenCount": prompt + candidates}
	if cached > 0 {
		u["cachedContentTokenCount"] = cached
	}
	return chunk(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": ""}}}, "finishReason": reason, "index": 0}},
		"usageMetadata": u,
		"modelVersion":  "mock-model",
	})
}

// Text streams s one word a chunk (each word with the space after it),
// then Finish("STOP", 10, 5, 0).
func Text(s string) []string {
	var out []string
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			out = append(out, TextChunk(w))
		}
	}
	return append(out, Finish("STOP", 10, 5, 0))
}

// ErrorBody is the API's error JSON, for an error status or, as a chunk,
// an error in the stream.
func ErrorBody(code int, status, message string) string {
	return chunk(map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
}
