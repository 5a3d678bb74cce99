package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brisvox/brisvox/messages"
)

func TestErrorContent(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		tool       string
		detail     string
		wantTool   string
		wantDetail string
	}{
		{name: "short values kept", kind: KindTimeout, tool: "book", detail: "too slow", wantTool: "book", wantDetail: "too slow"},
		{name: "html characters not escaped", kind: KindToolFailed, tool: "x", detail: "a<b & c>d", wantTool: "x", wantDetail: "a<b & c>d"},
		{name: "tool exactly at the limit", kind: KindUnknownTool, tool: strings.Repeat("t", 64), wantTool: strings.Repeat("t", 64)},
		{name: "tool over the limit", kind: KindUnknownTool, tool: strings.Repeat("t", 65), wantTool: strings.Repeat("t", 61) + "…"},
		{name: "detail exactly at the limit", kind: KindToolFailed, tool: "x", detail: strings.Repeat("d", 512), wantTool: "x", wantDetail: strings.Repeat("d", 512)},
		{name: "detail over the limit", kind: KindToolFailed, tool: "x", detail: strings.Repeat("d", 600), wantTool: "x", wantDetail: strings.Repeat("d", 509) + "…"},
		{
			// Catches a cut inside a rune: "é" is 2 bytes, so byte 61 of
			// "ab"+"é"*40 is a continuation byte and the cut backs off to 60.
			name: "multi-byte cut on a rune boundary", kind: KindUnknownTool, tool: "ab" + strings.Repeat("é", 40),
			wantTool: "ab" + strings.Repeat("é", 29) + "…",
		},
		{name: "invalid UTF-8 replaced", kind: KindToolFailed, tool: "x", detail: "bad\xff", wantTool: "x", wantDetail: "bad\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ErrorContent(tt.kind, tt.tool, tt.detail)
			var body map[string]string
			if err := json.Unmarshal([]byte(got), &body); err != nil {
				t.Fatalf("ErrorContent() = %s: not JSON: %v", got, err)
			}
			if body["error"] != tt.kind || body["tool"] != tt.wantTool || body["detail"] != tt.wantDetail || len(body) != 3 {
				t.Fatalf("ErrorContent() = %s", got)
			}
			if len(body["tool"]) > MaxErrorToolBytes || len(body["detail"]) > MaxErrorDetailBytes || !utf8.ValidString(got) {
				t.Fatalf("bounds broken: %s", got)
			}
		})
	}
	if got, want := ErrorContent(KindTimeout, "a", "b"), `{"error":"timeout","tool":"a","detail":"b"}`; got != want {
		t.Fatalf("key order: %s, want %s", got, want)
	}
}

func TestErrorResult(t *testing.T) {
	got := ErrorResult(messages.ToolCall{ID: "t1.0", Name: "book"}, KindInterrupted, "cut")
	want := messages.ToolResult{CallID: "t1.0", Name: "book", IsError: true, Content: `{"error":"interrupted","tool":"book","detail":"cut"}`}
	if got != want {
		t.Fatalf("ErrorResult() = %+v, want %+v", got, want)
	}
}
