package openai

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/internal/jsonscan"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

// chunkKeys are the member names the decoders read.
var chunkKeys = []string{"choices", "usage", "error", "message", "code", "index", "delta",
	"finish_reason", "content", "tool_calls", "id", "function", "name", "arguments",
	"prompt_tokens", "completion_tokens", "prompt_tokens_details", "cached_tokens"}

// comparable tells whether the oracle and the Scanner decoder must agree
// on data: they differ by design on a key that matches one of chunkKeys
// only when case is folded (encoding/json folds it), on a repeated key in
// one object (encoding/json merges a repeated object into the first), and
// on nesting deeper than the Scanner walks.
func comparable(data []byte) bool {
	var s jsonscan.Scanner
	s.Reset(data)
	ok := true
	var walk func()
	walk = func() {
		switch s.Peek() {
		case '{':
			if !s.Object() {
				return
			}
			seen := map[string]bool{}
			for s.More() {
				k := string(s.Key())
				if seen[k] {
					ok = false
				}
				seen[k] = true
				for _, known := range chunkKeys {
					if k != known && strings.EqualFold(k, known) {
						ok = false
					}
				}
				walk()
			}
		case '[':
			if s.Array() {
				for s.More() {
					walk()
				}
			}
		default:
			s.Skip()
		}
	}
	walk()
	if err := s.Done(); err != nil && strings.Contains(err.Error(), "less nesting") {
		return false
	}
	return ok
}

// sameError tells whether two decode errors are of the same kind: both
// nil, both Protocol, or both Rejected with the same status and detail.
func sameError(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	var ra, rb *providers.Rejected
	if errors.As(a, &ra) || errors.As(b, &rb) {
		return errors.As(a, &ra) && errors.As(b, &rb) && ra.Status == rb.Status && ra.Detail == rb.Detail
	}
	var pa, pb *providers.Protocol
	return errors.As(a, &pa) && errors.As(b, &pb)
}

// diffChunks feeds the chunks to both decoders, as the stream does (events
// emptied before each chunk, the finish reason kept across them), and
// fails on any difference.
func diffChunks(t *testing.T, chunks [][]byte) {
	t.Helper()
	var got decoder
	var want oracleDecoder
	for _, c := range chunks {
		if !comparable(c) {
			continue
		}
		got.events, want.events = got.events[:0], want.events[:0]
		gerr, werr := got.decode(c), want.decode(c)
		if !sameError(gerr, werr) {
			t.Fatalf("chunk %q: scanner error %v, oracle error %v", c, gerr, werr)
		}
		if gerr != nil {
			return // the stream ends at an error
		}
		if len(got.events) != 0 || len(want.events) != 0 {
			if !reflect.DeepEqual(got.events, want.events) {
				t.Fatalf("chunk %q: scanner events %+v, oracle %+v", c, got.events, want.events)
			}
		}
		if got.finish != want.finish {
			t.Fatalf("chunk %q: finish %q, oracle %q", c, got.finish, want.finish)
		}
	}
}

// diffSeeds are the chunk shapes of the mock and the tests, and broken
// ones. Chunks of one case are separated by a newline.
var diffSeeds = []string{
	m.TextChunk("Hello") + "\n" + m.TextChunk(`a "quoted" \ word é`) + "\n" + m.FinishChunk("stop"),
	m.ToolChunk(m.Frag{Index: 0, ID: "call_1", Name: "get_weather", Args: `{"city":"Pa`},
		m.Frag{Index: 1, ID: "call_2", Name: "get_time", Args: ``}) + "\n" +
		m.ToolChunk(m.Frag{Index: 0, Args: `ris\"x"}`}, m.Frag{Index: 1, Args: `{}`}),
	m.UsageChunk(120, 30, 64) + "\n" + m.FinishChunk("tool_calls"),
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}],"content":"before"}}]}`,
	`{"choices":[{"delta":{"content":"x"},"index":1},{"index":0,"delta":{"content":"y"},"finish_reason":"length"}]}`,
	`{"choices":[null,{"index":0,"delta":null}],"usage":null,"error":null}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[null,{"index":-1}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":-2}]},"index":3}]}`,
	`{"error":{"message":"overloaded","code":503},"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}`,
	`{"error":{"message":"x","code":"429"}}`,
	`{"error":{}}`,
	`{"choices":[{"index":-1,"delta":{"content":"not ours"}}]}`,
	`{"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":null}}`,
	`{"choices":[{"index":"0"}]}`, `{"choices":{}}`, `{"choices":[{"index":1.5}]}`, `[]`, `null`, `{`, `{"a":1}x`,
	`{"choices":[{"index":0,"delta":{"content":"\ud800 \u00e9 ` + "\xff" + `"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":5}}]}`,
	`{"choices":[{"index":0,"logprobs":{"content":[{"token":"a","bytes":[1,2]}]},"delta":{"role":"assistant","content":""}}],"id":"x","object":"chat.completion.chunk","created":1,"system_fingerprint":null}`,
}

// TestDecoderMatchesOracle runs the seeds through both decoders.
// Mutations caught: appending a delta's text after its call fragments
// (the seed with tool_calls before content), keeping a choice with a
// negative index (index > 0 instead of != 0).
func TestDecoderMatchesOracle(t *testing.T) {
	for _, c := range diffSeeds {
		diffChunks(t, bytes.Split([]byte(c), []byte("\n")))
	}
}

// FuzzDecoderMatchesOracle: on any chunks the Scanner decoder and the
// encoding/json oracle give the same events, finish reason and kind of
// error.
func FuzzDecoderMatchesOracle(f *testing.F) {
	for _, c := range diffSeeds {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		diffChunks(t, bytes.Split(data, []byte("\n")))
	})
}
