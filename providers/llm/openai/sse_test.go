package openai

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
	"github.com/brisvox/brisvox/providers/llm/internal/wire"
	m "github.com/brisvox/brisvox/providers/llm/openai/openaimock"
)

// memStream is a stream over an in-memory body: the parser and decoder
// without a socket.
func memStream(body io.Reader, max int) *stream {
	s := &stream{}
	cfg := Config{FirstEventTimeout: time.Hour, IdleTimeout: time.Hour, MaxLineBytes: max}
	s.Over(context.Background(), io.NopCloser(body), &s.dec, streamConfig(&cfg))
	return s
}

// TestSSEFraming: comments, event and id fields, CRLF, "data:" without a
// space and multi-line data are read as the SSE format says.
// Mutation caught: not trimming the CR of CRLF (the [DONE] match fails
// and the stream counts as cut).
func TestSSEFraming(t *testing.T) {
	body := ": keep-alive\r\n\r\nevent: chunk\r\nid: 1\r\ndata:" + m.TextChunk("a") + "\r\n\r\n" +
		"data: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\"b\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n"
	s := memStream(strings.NewReader(body), 1024)
	evs, err := llmtest.Collect(t, s)
	if err != nil || len(evs) != 3 || evs[0].Text != "a" || evs[1].Text != "b" || evs[2].Kind != providers.LLMDone {
		t.Fatalf("events %+v, err %v", evs, err)
	}
}

// FuzzSSE feeds any body to the parser and decoder: they never panic,
// never return data over the bound, and end with io.EOF, a Protocol, a
// Rejected (an error chunk) or a Disconnected (a body without [DONE]).
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: " + m.TextChunk("hi") + "\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: " + m.ToolChunk(m.Frag{Index: 0, ID: "c", Name: "n", Args: `{"a":`}) + "\n\n"))
	f.Add([]byte("data: " + m.UsageChunk(1, 2, 3) + "\r\n\r\n: c\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"x\",\"code\":429}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n\n"))
	f.Add([]byte("data: " + strings.Repeat("z", 600) + "\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		const max = 512
		r := wire.NewSSEReader(bytes.NewReader(body), max)
		for range len(body) + 1 {
			data, err := r.Next()
			if err != nil {
				break
			}
			if len(data) > max {
				t.Fatalf("data of %d bytes over %d", len(data), max)
			}
		}
		s := memStream(bytes.NewReader(body), max)
		defer s.Close()
		llmtest.EndsTyped(t, s, len(body)+2)
	})
}

// textBody is n text chunks as the service sends them, without [DONE].
func textBody(n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString("data: " + m.TextChunk("word ") + "\n\n")
	}
	return b.Bytes()
}

// TestDeltaAllocs pins the cost of one streamed text delta: the text
// string only.
// Mutation caught: a fresh chunk struct or event slice per line.
func TestDeltaAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	const n = 200
	body := bytes.NewReader(textBody(n + 10))
	s := memStream(body, DefaultMaxLineBytes)
	defer s.Close()
	if allocs := llmtest.RecvAllocs(t, s, n, "word "); allocs > deltaAllocBudget {
		t.Fatalf("%.1f allocations per delta, budget %d", allocs, deltaAllocBudget)
	}
}

// BenchmarkDelta measures the adapter's cost per streamed text delta:
// reading the line, decoding the chunk, making the event.
func BenchmarkDelta(b *testing.B) {
	body := textBody(1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(body) / 1024))
	rd := bytes.NewReader(body)
	s := memStream(rd, DefaultMaxLineBytes)
	defer s.Close()
	llmtest.BenchRecv(b, s, 1024, func() {
		rd.Reset(body) // the stream's reader has buffered nothing past the last event
	})
}

// deltaAllocBudget: the text string, nothing else (the chunk is read in
// place by the Scanner; 9 with encoding/json).
const deltaAllocBudget = 1
