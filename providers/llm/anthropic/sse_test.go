package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/providers"
	m "github.com/brisvox/brisvox/providers/llm/anthropic/anthropicmock"
	"github.com/brisvox/brisvox/providers/llm/internal/llmtest"
)

// memStream is a stream over an in-memory body: the parser and decoder
// without a socket.
func memStream(body io.Reader, max int) *stream {
	s := &stream{}
	s.dec.init()
	cfg := Config{FirstEventTimeout: time.Hour, IdleTimeout: time.Hour, MaxLineBytes: max}
	s.Over(context.Background(), io.NopCloser(body), &s.dec, streamConfig(&cfg))
	return s
}

// sseBody frames data lines as the service does: an event: line naming
// the type, the data: line, a blank line.
func sseBody(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		typ := l[len(`{"type":"`):]
		typ = typ[:strings.IndexByte(typ, '"')]
		b.WriteString("event: " + typ + "\r\ndata: " + l + "\r\n\r\n")
	}
	return b.String()
}

// TestSSEFraming: event: lines, CRLF, comments and a multi-line data
// field are read as the SSE format says; message_stop ends the stream.
// Mutation seen failing: not trimming the CR of CRLF (the blank line "\r"
// no longer ends an event: the data of several events run together).
func TestSSEFraming(t *testing.T) {
	body := ": keep-alive\r\n\r\n" + sseBody(m.MessageStart(1), m.TextStart(0)) +
		"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\r\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"ab\"}}\r\n\r\n" +
		sseBody(m.BlockStop(0), m.MessageDelta("end_turn", 2), m.MessageStop())
	s := memStream(strings.NewReader(body), 1024)
	evs, err := llmtest.Collect(t, s)
	if err != nil || len(evs) != 3 || evs[0].Text != "ab" || evs[1].Kind != providers.LLMUsage || evs[2].Kind != providers.LLMDone {
		t.Fatalf("events %+v, err %v", evs, err)
	}
}

// FuzzSSE feeds any body to the parser and decoder: they never panic and
// end with io.EOF, a Protocol, a Rejected (an error event) or a
// Disconnected (a body without message_stop).
func FuzzSSE(f *testing.F) {
	f.Add([]byte(sseBody(m.Text("hi there")...)))
	f.Add([]byte(sseBody(m.MessageStart(1), m.ToolStart(0, "toolu_1", "n"), m.InputDelta(0, `{"a":`), m.BlockStop(0))))
	f.Add([]byte(sseBody(m.MessageStart(1), m.ThinkingStart(0), m.ThinkingDelta(0, "hm"), m.SignatureDelta(0, "sig"), m.BlockStop(0), m.MessageStop())))
	f.Add([]byte(sseBody(m.ErrorEvent("overloaded_error", "x"))))
	f.Add([]byte("data: " + strings.Repeat("z", 600) + "\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		const max = 512
		s := memStream(bytes.NewReader(body), max)
		defer s.Close()
		llmtest.EndsTyped(t, s, len(body)+2)
	})
}

// TestThinkingBound: thinking past maxThinkingBytes is a Protocol, not a
// growing buffer. Mutation seen failing: charge never refusing (the
// stream ends cleanly).
func TestThinkingBound(t *testing.T) {
	chunk := strings.Repeat("x", 8000)
	lines := []string{m.MessageStart(1), m.ThinkingStart(0)}
	for range maxThinkingBytes/len(chunk) + 1 {
		lines = append(lines, m.ThinkingDelta(0, chunk))
	}
	lines = append(lines, m.BlockStop(0), m.MessageStop())
	s := memStream(strings.NewReader(sseBody(lines...)), DefaultMaxLineBytes)
	if _, err := llmtest.Collect(t, s); !errors.Is(err, providers.ErrProtocol) {
		t.Fatalf("error %v, want a Protocol", err)
	}
}

// textBody is n text deltas as the service sends them, without the end.
func textBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(sseBody(m.MessageStart(1), m.TextStart(0)))
	for range n {
		b.WriteString(sseBody(m.TextDelta(0, "word ")))
	}
	return b.Bytes()
}

// TestDeltaAllocs pins the cost of one streamed text delta through the
// SSE reader and the decoder: the text string and nothing else (the
// events slice and the scanner's buffers are reused). Mutations seen
// failing: the event's type, or the delta's, read with stringOf instead
// of bytesOf (2 allocations).
func TestDeltaAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	const n = 200
	s := memStream(bytes.NewReader(textBody(n+10)), DefaultMaxLineBytes)
	defer s.Close()
	if allocs := llmtest.RecvAllocs(t, s, n, "word "); allocs != 1 {
		t.Fatalf("%.1f allocations per delta, want 1 (its text)", allocs)
	}
}

// BenchmarkDelta measures the adapter's cost per streamed text delta:
// reading the lines, decoding the event, making the LLMText (1
// allocation: the text; see docs/providers/anthropic.md).
func BenchmarkDelta(b *testing.B) {
	body := textBody(1024)
	b.ReportAllocs()
	// After the first round, the deltas alone: block 0 is still open (the
	// stream's reader has buffered nothing past the last delta).
	deltas := body[len(sseBody(m.MessageStart(1), m.TextStart(0))):]
	rd := bytes.NewReader(body)
	s := memStream(rd, DefaultMaxLineBytes)
	defer s.Close()
	llmtest.BenchRecv(b, s, 1024, func() { rd.Reset(deltas) })
}
