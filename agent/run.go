package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// RunCall runs one tool call and always answers it: every failure becomes
// an error result (IsError, an ErrorContent body) instead of an error, so
// the caller can append the result and the context stays valid.
//
//   - unknown tool: unknown_tool, nothing runs;
//   - arguments over MaxArgumentBytes: arguments_too_large, not parsed;
//   - arguments that are not a JSON object or do not match the tool's
//     schema: invalid_arguments with its issues (empty arguments mean {});
//   - ctx already done: interrupted, nothing runs;
//   - the spec's timeout passes: timeout; ctx is cancelled: interrupted;
//   - the tool returns an error wrapping an *ArgumentError (its own check
//     of the arguments refused them, before it acted): that error's kind
//     and body, invalid_arguments;
//   - the tool returns another error or panics: tool_failed, with the
//     error's text (or the panic value) as the bounded detail.
//
// RunCall blocks until the tool answers, the timeout passes or ctx is done;
// the caller (an actor) runs it in a goroutine it owns. The tool itself runs
// in a goroutine of its own, so a tool that ignores its context cannot hold
// RunCall past its deadline; that goroutine ends when the tool returns.
// info.CallID defaults to call.ID.
func RunCall(ctx context.Context, reg *Registry, call messages.ToolCall, info CallInfo) messages.ToolResult {
	return run(ctx, reg, call, info, true)
}

// RunAdmitted is RunCall for a call whose arguments the caller already
// checked with Registry.ValidateArguments (the tools actor admits a whole
// round before anything runs): they are not checked a second time.
func RunAdmitted(ctx context.Context, reg *Registry, call messages.ToolCall, info CallInfo) messages.ToolResult {
	return run(ctx, reg, call, info, false)
}

func run(ctx context.Context, reg *Registry, call messages.ToolCall, info CallInfo, validate bool) messages.ToolResult {
	e, ok := reg.entry(call.Name)
	if !ok {
		return ErrorResult(call, KindUnknownTool, "no tool of this name is available")
	}
	tool, spec := e.tool, e.spec
	args := json.RawMessage(bytes.TrimSpace(call.Arguments))
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if validate {
		var aerr *ArgumentError
		if args, aerr = validateArguments(e.schema, e.fast, call.Arguments); aerr != nil {
			return aerr.Result(call)
		}
	}
	// The tool gets its own copy: the caller may reuse its buffer.
	args = bytes.Clone(args)
	if ctx.Err() != nil {
		return ErrorResult(call, KindInterrupted, "the call was interrupted before it started; it did not run")
	}
	if info.CallID == "" {
		info.CallID = call.ID
	}

	// A ReadOnly call is cut at its timeout. A SideEffect call is not: the
	// engine answers its slot at the timeout and lets it run (it may be
	// booking something right now) up to the hard backstop.
	limit := spec.Timeout
	if spec.Effect == SideEffect {
		limit = max(SideEffectBackstop, spec.Timeout)
	}
	callCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan outcome, 1) // buffered: a late tool never blocks on send
	go func() {
		done <- callTool(callCtx, tool, args, info)
	}()

	var o outcome
	select {
	case o = <-done:
	case <-callCtx.Done():
		// Prefer an answer that arrived together with the deadline.
		select {
		case o = <-done:
		default:
			o = outcome{err: callCtx.Err()}
		}
	}
	// A SideEffect tool may have acted before it was cut off: say so, so the
	// model does not repeat a booking it cannot see.
	side := spec.Effect == SideEffect
	unsure := ""
	if side {
		unsure = "; it may have taken effect: do not repeat it without asking the caller"
	}
	var r messages.ToolResult
	switch {
	case o.panicked && side:
		r = ErrorResult(call, KindUnknownOutcome, "the tool broke down while it ran; its outcome is unknown: do not repeat it without asking the caller")
		r.Outcome = OutcomeLost
	case o.panicked:
		r = ErrorResult(call, KindToolFailed, fmt.Sprintf("the tool panicked: %v", o.panicValue))
		r.Outcome = OutcomeFailed
	case o.err == nil:
		r = resultOf(call, o.out.Content, side)
		r.Summary = truncateUTF8(o.out.Summary, MaxSummaryBytes)
	case errors.Is(o.err, context.DeadlineExceeded) && callCtx.Err() != nil && side:
		r = ErrorResult(call, KindUnknownOutcome, fmt.Sprintf("the call ran for %v without an answer and was stopped; its outcome is unknown: do not repeat it without asking the caller", limit))
		r.Outcome = OutcomeLost
	case errors.Is(o.err, context.DeadlineExceeded) && callCtx.Err() != nil:
		r = ErrorResult(call, KindTimeout, fmt.Sprintf("the tool did not answer in time (limit %v)", limit))
		r.Outcome = OutcomeTimedOut
	case errors.Is(o.err, context.Canceled) && ctx.Err() != nil:
		r = ErrorResult(call, KindInterrupted, "the call was interrupted before it finished"+unsure)
		r.Outcome = OutcomeInterrupted
	case errors.As(o.err, new(*ArgumentError)):
		// A tool's own check of its arguments (transfer_call's allowlist)
		// refused them before it acted: the model reads the same answer
		// as a schema refusal.
		var aerr *ArgumentError
		errors.As(o.err, &aerr)
		r = aerr.Result(call)
		r.Outcome = aerr.Kind
	default:
		r = ErrorResult(call, KindToolFailed, o.err.Error())
		r.Outcome = OutcomeFailed
	}
	return r
}

// resultOf bounds a tool's answer to MaxResultBytes: a SideEffect result is
// cut (its action happened; the model must hear of it), a ReadOnly one is
// refused (the model can ask for less).
func resultOf(call messages.ToolCall, content string, side bool) messages.ToolResult {
	if len(content) <= MaxResultBytes {
		return messages.ToolResult{CallID: call.ID, Name: call.Name, Content: content, Outcome: OutcomeOK}
	}
	if !side {
		r := ErrorResult(call, KindResultTooLarge, fmt.Sprintf("the result has %d bytes, over the limit of %d: ask for less", len(content), MaxResultBytes))
		r.Outcome = OutcomeResultTooLarge
		return r
	}
	cut := truncateUTF8(content, MaxResultBytes-len(TruncatedMark)+len("…"))
	cut = strings.TrimSuffix(cut, "…") + TruncatedMark
	return messages.ToolResult{CallID: call.ID, Name: call.Name, Content: cut, Outcome: OutcomeOKTruncated}
}

// Limits and outcome names of a call (the contract's names).
const (
	// MaxSummaryBytes bounds Output.Summary (valid UTF-8, cut with an
	// ellipsis).
	MaxSummaryBytes = 120
	// MaxResultBytes bounds a tool's result (64 KiB).
	MaxResultBytes = 64 << 10
	// TruncatedMark ends a SideEffect result cut to MaxResultBytes.
	TruncatedMark = "...[truncated]"
	// SideEffectBackstop is how long a SideEffect call may run at most
	// (or its own timeout, when longer): past it the call is stopped and
	// recorded lost.
	SideEffectBackstop = 120 * time.Second

	OutcomeOK             = "ok"
	OutcomeOKTruncated    = "ok_truncated"
	OutcomeFailed         = "failed"
	OutcomeTimedOut       = "timed_out"
	OutcomeInterrupted    = "interrupted"
	OutcomeLost           = "lost"
	OutcomeResultTooLarge = "result_too_large"
)

// outcome is what a tool's goroutine reports.
type outcome struct {
	out        Output
	err        error
	panicked   bool
	panicValue any
}

// callTool runs the tool, turning a panic into an outcome.
func callTool(ctx context.Context, t Tool, args json.RawMessage, info CallInfo) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{panicked: true, panicValue: p}
		}
	}()
	out, err := t.Call(ctx, args, info)
	return outcome{out: out, err: err}
}
