package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
//   - the tool returns an error or panics: tool_failed, with the error's
//     text (or the panic value) as the bounded detail.
//
// RunCall blocks until the tool answers, the timeout passes or ctx is done;
// the caller (an actor) runs it in a goroutine it owns. The tool itself runs
// in a goroutine of its own, so a tool that ignores its context cannot hold
// RunCall past its deadline; that goroutine ends when the tool returns.
// info.CallID defaults to call.ID.
func RunCall(ctx context.Context, reg *Registry, call messages.ToolCall, info CallInfo) messages.ToolResult {
	e, ok := reg.entry(call.Name)
	if !ok {
		return ErrorResult(call, KindUnknownTool, "no tool of this name is available")
	}
	tool, spec := e.tool, e.spec
	args, aerr := validateArguments(e.schema, call.Arguments)
	if aerr != nil {
		return aerr.Result(call)
	}
	// The tool gets its own copy: the caller may reuse its buffer.
	args = bytes.Clone(args)
	if ctx.Err() != nil {
		return ErrorResult(call, KindInterrupted, "the call was interrupted before it started; it did not run")
	}
	if info.CallID == "" {
		info.CallID = call.ID
	}

	callCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
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
	unsure := ""
	if spec.Effect == SideEffect {
		unsure = "; it may have taken effect: do not repeat it without asking the caller"
	}
	switch {
	case o.panicked:
		return ErrorResult(call, KindToolFailed, fmt.Sprintf("the tool panicked: %v", o.panicValue))
	case o.err == nil:
		return messages.ToolResult{CallID: call.ID, Name: call.Name, Content: o.out.Content}
	case errors.Is(o.err, context.DeadlineExceeded) && callCtx.Err() != nil:
		return ErrorResult(call, KindTimeout, fmt.Sprintf("the tool did not answer in time (limit %v)%s", spec.Timeout, unsure))
	case errors.Is(o.err, context.Canceled) && ctx.Err() != nil:
		return ErrorResult(call, KindInterrupted, "the call was interrupted before it finished"+unsure)
	default:
		return ErrorResult(call, KindToolFailed, o.err.Error())
	}
}

type outcome struct {
	out        Output
	err        error
	panicked   bool
	panicValue any
}

// callTool runs the tool and turns a panic into an error, since a panic in
// the tool's goroutine would otherwise end the whole process.
func callTool(ctx context.Context, t Tool, args json.RawMessage, info CallInfo) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{panicked: true, panicValue: p}
		}
	}()
	out, err := t.Call(ctx, args, info)
	return outcome{out: out, err: err}
}
