package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// Effect says whether running a tool changes anything outside the call. It
// decides what an interruption may do: a ReadOnly call can be cancelled,
// run speculatively or run again; a SideEffect call (a booking, a transfer)
// must not be run twice nor silently dropped.
type Effect int

// The effects. The zero value is deliberately not one of them: Register
// rejects a spec that does not declare its effect, because guessing
// ReadOnly would let a booking be cancelled halfway or run speculatively.
const (
	ReadOnly Effect = iota + 1
	SideEffect
)

// String implements fmt.Stringer.
func (e Effect) String() string {
	switch e {
	case ReadOnly:
		return "read_only"
	case SideEffect:
		return "side_effect"
	default:
		return "undeclared"
	}
}

// Defaults of a Spec, set by NewSpec.
const (
	// DefaultTimeout bounds one call: long enough for one HTTP round trip,
	// short enough that the caller is not left in silence.
	DefaultTimeout = 5 * time.Second

	// DefaultFillerAfter is when a filler phrase is played for a call still
	// running. Register also uses it for a spec that leaves FillerAfter
	// zero.
	DefaultFillerAfter = 700 * time.Millisecond

	// MaxToolNameBytes is the longest tool name providers accept.
	MaxToolNameBytes = 64
)

// ConfirmPendingTool is the name of the built-in tool that confirms a held
// call of a Confirm tool. It is reserved: Register refuses a tool of this
// name, so a registered tool can never pose as the confirmation.
const ConfirmPendingTool = "confirm_pending"

// Spec describes a tool to the model and to the engine that runs it. Build
// it with NewSpec, which sets the defaults; Register refuses a spec without
// a positive Timeout rather than guess one.
type Spec struct {
	// Name is what the model calls: 1 to 64 ASCII letters, digits, '_' or
	// '-' (the common subset of the providers' rules).
	Name        string
	Description string
	// Parameters is the JSON Schema (draft 2020-12) of the arguments. It
	// must be an object schema ("type": "object") that compiles offline:
	// local references ("#/$defs/...") work, remote ones are refused.
	// Empty means {"type":"object"} (no declared arguments).
	Parameters json.RawMessage
	Effect     Effect
	// Timeout bounds one call. It must be positive: NewSpec sets
	// DefaultTimeout.
	Timeout time.Duration
	// FillerAfter is how long a call may run before a filler phrase is
	// played; zero means DefaultFillerAfter, negative means never.
	FillerAfter time.Duration
	// Confirm declares that the model's call must be held until the user
	// agreed to it in a later turn (through ConfirmPendingTool). SideEffect
	// tools only: a ReadOnly tool changes nothing to confirm. Register
	// checks the flag; holding the call is the tool engine's job, and
	// RunCall alone does not hold it.
	Confirm bool
	// Repeatable declares that an identical call may run again in a later
	// response of the same turn (pressing the same DTMF digit twice), where
	// the engine would otherwise refuse it as already done. SideEffect
	// tools only: a ReadOnly tool may always repeat.
	Repeatable bool
}

// NewSpec returns a spec with the defaults: DefaultTimeout and
// DefaultFillerAfter, no parameters, neither Confirm nor Repeatable.
func NewSpec(name, description string, effect Effect) Spec {
	return Spec{
		Name:        name,
		Description: description,
		Effect:      effect,
		Timeout:     DefaultTimeout,
		FillerAfter: DefaultFillerAfter,
	}
}

// CallInfo is what a tool knows about the call it serves, beyond its
// arguments.
type CallInfo struct {
	// Session is the call (phone or browser session) the tool runs for.
	Session string
	// CallID is the internal, stable id of the tool call.
	CallID string
	// Epoch is the bot turn that made the call.
	Epoch messages.Epoch
	// Round is the tool-loop round within the epoch (0 first).
	Round int
	// IdempotencyKey (session, epoch, call id) is the same for every
	// delivery of one SideEffect call; zero for a ReadOnly call. Key your
	// own store on the whole key (distinct keys may share a digest); pass
	// IdempotencyKey.String(), its stable FNV-1a digest, to an external
	// API as its idempotency key, so a redelivered call does not act twice.
	IdempotencyKey IdempotencyKey
}

// Output is a tool's answer: the text the model reads.
type Output struct {
	Content string
	// Summary is an optional short line for the caller's own page saying
	// what the call did ("reference B-0001"): never sent to the model,
	// never logged, cut at MaxSummaryBytes. Say nothing the caller did not
	// say or hear.
	Summary string
}

// Tool is one function the model may call.
//
// Call must return when ctx is done: RunCall stops waiting at the spec's
// timeout or at an interruption and answers for the tool, but it cannot
// stop the tool's goroutine. A tool that ignores ctx therefore delays
// nobody, but leaks its own goroutine (and whatever it holds) until it
// returns. Call may be called concurrently for different calls. A panic in
// Call is recovered and answered as tool_failed.
type Tool interface {
	Spec() Spec
	Call(ctx context.Context, args json.RawMessage, call CallInfo) (Output, error)
}

// CallFunc is the body of a tool built with NewFuncTool.
type CallFunc func(ctx context.Context, args json.RawMessage, call CallInfo) (Output, error)

// NewFuncTool makes a Tool from a spec and a function, for tools with no
// state of their own (and for tests).
func NewFuncTool(spec Spec, fn CallFunc) Tool {
	return funcTool{spec: spec, fn: fn}
}

type funcTool struct {
	spec Spec
	fn   CallFunc
}

var _ Tool = funcTool{}

func (t funcTool) Spec() Spec { return t.spec }

func (t funcTool) Call(ctx context.Context, args json.RawMessage, call CallInfo) (Output, error) {
	return t.fn(ctx, args, call)
}
