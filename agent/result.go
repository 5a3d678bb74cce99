package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/brisvox/brisvox/messages"
)

// Kinds of error results, the "error" field of ErrorContent. The model reads
// them, so they are stable snake_case words; the names are the contract's.
const (
	// Malformed calls: the model should fix the call.
	KindUnknownTool       = "unknown_tool"
	KindInvalidArguments  = "invalid_arguments"
	KindArgumentsTooLarge = "arguments_too_large"
	KindTooManyCalls      = "too_many_calls"

	// Refusals of the round.
	KindBudgetExhausted = "budget_exhausted"
	KindStaleTurn       = "stale_turn"

	// Failures of the run.
	KindTimeout        = "timeout"
	KindInterrupted    = "interrupted"
	KindToolFailed     = "tool_failed"
	KindResultTooLarge = "result_too_large"

	// Idempotency refusals.
	KindDuplicateCall  = "duplicate_call"
	KindStoreFull      = "store_full"
	KindUnknownOutcome = "unknown_outcome"
	KindAlreadyDone    = "already_done"
)

// Bounds of an error body, so a tool's long error or a model's invented
// tool name cannot flood the context.
const (
	MaxErrorToolBytes   = 64
	MaxErrorDetailBytes = 512
)

// ellipsis marks a cut value. It counts toward the bound.
const ellipsis = "…"

// ErrorContent is the body of an error result, the JSON object
// {"error": kind, "tool": tool, "detail": detail} the model reads. tool is
// cut to MaxErrorToolBytes and detail to MaxErrorDetailBytes on UTF-8
// boundaries, an ellipsis included; invalid UTF-8 is replaced first so the
// bound holds on what is sent.
func ErrorContent(kind, tool, detail string) string {
	body := struct {
		Error  string `json:"error"`
		Tool   string `json:"tool"`
		Detail string `json:"detail"`
	}{kind, truncateUTF8(tool, MaxErrorToolBytes), truncateUTF8(detail, MaxErrorDetailBytes)}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the model reads it; "<" is clearer than "\u003c"
	if err := enc.Encode(body); err != nil {
		// Strings only, valid UTF-8: Encode cannot fail.
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ErrorResult is the tool result answering call with an error body.
func ErrorResult(call messages.ToolCall, kind, detail string) messages.ToolResult {
	return messages.ToolResult{
		CallID:  call.ID,
		Name:    call.Name,
		Content: ErrorContent(kind, call.Name, detail),
		IsError: true,
	}
}

// truncateUTF8 returns s when it fits max bytes, otherwise its longest
// prefix ending on a rune boundary followed by an ellipsis, max bytes in
// all.
func truncateUTF8(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
