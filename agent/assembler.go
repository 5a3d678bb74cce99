package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/brisvox/brisvox/messages"
)

// Limits of one response's assembly (the contract's item 3).
const (
	// DefaultMaxResponseBytes caps the bytes buffered for one response:
	// text, call ids, names, argument text and provider data, plus
	// CallSlotBytes per call.
	DefaultMaxResponseBytes = 256 << 10

	// DefaultMaxCalls caps the calls of one response. It bounds the
	// fan-out of one model response (every call is executed and answered),
	// so the tools actor can dispatch a response's calls without a further
	// limit.
	DefaultMaxCalls = 32

	// CallSlotBytes is charged when a fragment opens a call, so fragments
	// that carry nothing still use up the byte cap and cannot grow the
	// buffer forever.
	CallSlotBytes = 64
)

// Sentinel errors of the Assembler. Every error it returns wraps exactly one
// of them, as fmt.Errorf("%w: detail", ErrX). A refused delta is never
// applied, not even in part, and the assembler stays usable: the adapter
// decides whether to go on or to Cancel.
var (
	// ErrIDConflict: a fragment carries a call id different from the one
	// the call already has. The call keeps the first id.
	ErrIDConflict = errors.New("agent: conflicting tool call id")

	// ErrNameConflict: a fragment carries a tool name different from the
	// one the call already has. The call keeps the first name.
	ErrNameConflict = errors.New("agent: conflicting tool call name")

	// ErrCallProviderDataConflict: a fragment carries call provider data
	// different from the call's earlier value. The first value is kept.
	ErrCallProviderDataConflict = errors.New("agent: conflicting call provider data")

	// ErrResponseProviderDataConflict: response provider data different
	// from the earlier value. The first value is kept.
	ErrResponseProviderDataConflict = errors.New("agent: conflicting response provider data")

	// ErrTooManyCalls: a fragment would open a call beyond the call cap.
	// Fragments of calls already open are still accepted.
	ErrTooManyCalls = errors.New("agent: too many tool calls in one response")

	// ErrResponseTooLarge: the delta would take the buffered bytes over the
	// byte cap.
	ErrResponseTooLarge = errors.New("agent: response too large")

	// ErrInvalidFragment: a call fragment with a negative index.
	ErrInvalidFragment = errors.New("agent: invalid tool call fragment")

	// ErrCancelled: the assembler was cancelled; it takes no delta and
	// cannot be finished.
	ErrCancelled = errors.New("agent: response assembly cancelled")

	// ErrFinished: the assembler was already finished; it takes no delta
	// and cannot be finished again.
	ErrFinished = errors.New("agent: response assembly already finished")

	// ErrInvalidAssemblerConfig: an AssemblerConfig with a negative limit.
	ErrInvalidAssemblerConfig = errors.New("agent: invalid assembler config")
)

// AssemblerConfig holds the limits of an Assembler. The zero value means the
// defaults.
type AssemblerConfig struct {
	// MaxBytes caps the buffered bytes; 0 means DefaultMaxResponseBytes.
	MaxBytes int
	// MaxCalls caps the calls of the response; 0 means DefaultMaxCalls.
	MaxCalls int
}

// Validate rejects negative limits with ErrInvalidAssemblerConfig.
func (c AssemblerConfig) Validate() error {
	if c.MaxBytes < 0 || c.MaxCalls < 0 {
		return fmt.Errorf("%w: MaxBytes %d and MaxCalls %d must not be negative", ErrInvalidAssemblerConfig, c.MaxBytes, c.MaxCalls)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c AssemblerConfig) withDefaults() AssemblerConfig {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxResponseBytes
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultMaxCalls
	}
	return c
}

// CallFragment is one streamed piece of the tool call at Index. Index is the
// provider's position of the call in the response; fragments of different
// calls and text may interleave, and Arguments may split the JSON anywhere
// (inside strings, escapes, numbers). Empty ID and Name, and ProviderData
// that is empty or the JSON null, count as absent, so providers that repeat
// empty fields on every chunk are fine.
type CallFragment struct {
	Index        int
	ID           string
	Name         string
	Arguments    string
	ProviderData []byte
}

// assemblerState says whether deltas are still taken.
type assemblerState uint8

const (
	assemblerOpen assemblerState = iota
	assemblerFinished
	assemblerCancelled
)

// callSlot buffers the fragments of one call.
type callSlot struct {
	index        int
	id           string
	name         string
	args         []byte
	providerData []byte
}

// Assembler builds one model response from its streamed deltas: text, the
// response's provider data and tool-call fragments, in any interleaving.
// Nothing is parsed while streaming; Finish parses once. Use one Assembler
// per response; it is not safe for concurrent use (the llm actor owns it).
//
// After Finish or Cancel every method returns ErrFinished or ErrCancelled.
type Assembler struct {
	maxBytes int
	maxCalls int
	used     int // bytes charged so far, CallSlotBytes per call included

	text         strings.Builder
	providerData []byte
	calls        []callSlot // sorted by index; at most maxCalls
	state        assemblerState
}

// NewAssembler returns an Assembler with cfg's limits (zero fields mean the
// defaults). The error wraps ErrInvalidAssemblerConfig.
func NewAssembler(cfg AssemblerConfig) (*Assembler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Assembler{maxBytes: cfg.MaxBytes, maxCalls: cfg.MaxCalls}, nil
}

// usable reports why no delta is taken any more, if so.
func (a *Assembler) usable() error {
	switch a.state {
	case assemblerFinished:
		return ErrFinished
	case assemblerCancelled:
		return ErrCancelled
	}
	return nil
}

// fits checks that cost more bytes fit the cap. It does not charge: the
// caller adds cost to used once the delta is applied.
func (a *Assembler) fits(cost int) error {
	if cost > a.maxBytes-a.used {
		return fmt.Errorf("%w: %d more bytes over the cap of %d (%d buffered)", ErrResponseTooLarge, cost, a.maxBytes, a.used)
	}
	return nil
}

// AppendText appends a text delta. Text is kept in order. The error wraps
// ErrResponseTooLarge (nothing appended), ErrCancelled or ErrFinished.
func (a *Assembler) AppendText(s string) error {
	if err := a.usable(); err != nil {
		return err
	}
	if err := a.fits(len(s)); err != nil {
		return err
	}
	a.text.WriteString(s)
	a.used += len(s)
	return nil
}

// SetProviderData records the response's provider round-trip data (a
// reasoning signature, say). Send each value whole: values are not
// concatenated. The first present value wins and is charged at its size; the
// same value again is accepted and not charged, and a different one is
// refused with ErrResponseProviderDataConflict. Values are compared byte for
// byte, as sent: the assembler does not parse them. Empty or null data is
// absent. v is copied.
func (a *Assembler) SetProviderData(v []byte) error {
	if err := a.usable(); err != nil {
		return err
	}
	if absentData(v) {
		return nil
	}
	if a.providerData != nil {
		if !bytes.Equal(a.providerData, v) {
			return fmt.Errorf("%w: %d bytes differ from the %d bytes received first", ErrResponseProviderDataConflict, len(v), len(a.providerData))
		}
		return nil
	}
	if err := a.fits(len(v)); err != nil {
		return err
	}
	a.providerData = bytes.Clone(v)
	a.used += len(v)
	return nil
}

// AppendCall buffers one fragment of the call at f.Index, opening the call
// if it is the first fragment of that index. On the first non-empty ID and
// Name, and the first present ProviderData, the value is taken; a different
// later value is refused. The fragment is applied whole or not at all.
//
// Checks, in order: ErrInvalidFragment (negative index); ErrTooManyCalls (a
// new index beyond the call cap); ErrIDConflict, ErrNameConflict,
// ErrCallProviderDataConflict; ErrResponseTooLarge (the new bytes, plus
// CallSlotBytes for a new call, over the cap).
func (a *Assembler) AppendCall(f CallFragment) error {
	if err := a.usable(); err != nil {
		return err
	}
	if f.Index < 0 {
		return fmt.Errorf("%w: negative index %d", ErrInvalidFragment, f.Index)
	}
	pos, found := slices.BinarySearchFunc(a.calls, f.Index, func(s callSlot, i int) int { return s.index - i })
	var cur callSlot // the call as it is; zero for a new one
	cost := len(f.Arguments)
	if found {
		cur = a.calls[pos]
	} else {
		if len(a.calls) >= a.maxCalls {
			return fmt.Errorf("%w: index %d would open call %d, the cap is %d", ErrTooManyCalls, f.Index, len(a.calls)+1, a.maxCalls)
		}
		cost += CallSlotBytes
	}
	newID, newName := false, false
	if f.ID != "" {
		switch cur.id {
		case "":
			newID = true
			cost += len(f.ID)
		case f.ID:
		default:
			return fmt.Errorf("%w: call index %d has id %q, fragment says %q", ErrIDConflict, f.Index, cur.id, f.ID)
		}
	}
	if f.Name != "" {
		switch cur.name {
		case "":
			newName = true
			cost += len(f.Name)
		case f.Name:
		default:
			return fmt.Errorf("%w: call index %d is %q, fragment says %q", ErrNameConflict, f.Index, cur.name, f.Name)
		}
	}
	newData := false
	if !absentData(f.ProviderData) {
		switch {
		case cur.providerData == nil:
			newData = true
			cost += len(f.ProviderData)
		case !bytes.Equal(cur.providerData, f.ProviderData):
			return fmt.Errorf("%w: call index %d: %d bytes differ from the %d bytes received first", ErrCallProviderDataConflict, f.Index, len(f.ProviderData), len(cur.providerData))
		}
	}
	if err := a.fits(cost); err != nil {
		return err
	}

	if !found {
		a.calls = slices.Insert(a.calls, pos, callSlot{index: f.Index})
	}
	s := &a.calls[pos]
	if newID {
		s.id = f.ID
	}
	if newName {
		s.name = f.Name
	}
	if newData {
		s.providerData = bytes.Clone(f.ProviderData)
	}
	s.args = append(s.args, f.Arguments...)
	a.used += cost
	return nil
}

// absentData reports whether provider data counts as absent: empty, or the
// JSON null.
func absentData(v []byte) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

// Cancel drops the response: it yields no text and no tool calls, and
// Finish returns ErrCancelled. The buffers are released. Cancel after Finish
// or Cancel does nothing.
func (a *Assembler) Cancel() {
	if a.state != assemblerOpen {
		return
	}
	a.state = assemblerCancelled
	a.text.Reset()
	a.providerData = nil
	a.calls = nil
}

// Finish parses the buffered calls once, in index order, and returns the
// response; the assembler takes nothing afterwards. Arguments that are empty
// or blank mean {}. A call with no name, arguments that are not valid UTF-8
// JSON, or JSON that is not an object becomes an invalid call, answered by
// its ErrorResult; its valid siblings assemble normally.
//
// Ids are the provider's, as given, and may be empty: this package does not
// mint them. The caller that owns the context mints stable internal ids by
// setting Calls[i].Call.ID before it takes AssistantMessage, ValidCalls and
// ErrorResults, so all three agree.
//
// Finish is linear in the buffered bytes (at most MaxBytes). The error is
// ErrCancelled or ErrFinished.
func (a *Assembler) Finish() (*Response, error) {
	if err := a.usable(); err != nil {
		return nil, err
	}
	a.state = assemblerFinished
	r := &Response{Text: a.text.String(), ProviderData: a.providerData}
	if len(a.calls) > 0 {
		r.Calls = make([]AssembledCall, len(a.calls))
		for i, s := range a.calls {
			r.Calls[i] = assemble(s)
		}
	}
	a.text = strings.Builder{}
	a.providerData = nil
	a.calls = nil
	return r, nil
}

// assemble parses one buffered call. The slot's buffers are handed over:
// the assembler is done with them.
func assemble(s callSlot) AssembledCall {
	c := AssembledCall{
		Index:        s.index,
		Call:         messages.ToolCall{ID: s.id, Name: s.name},
		ProviderData: s.providerData,
	}
	invalid := func(kind, detail string) AssembledCall {
		c.Call.Arguments = json.RawMessage("{}")
		c.Invalid = &InvalidCall{Kind: kind, Detail: detail, Name: s.name, RawArguments: string(s.args)}
		return c
	}
	if s.name == "" {
		// Recorded under unknown_tool so the assistant message stays valid
		// for every provider; the error result explains.
		c.Call.Name = KindUnknownTool
		return invalid(KindUnknownTool, "the tool call has no tool name")
	}
	if len(bytes.TrimSpace(s.args)) == 0 {
		c.Call.Arguments = json.RawMessage("{}")
		return c
	}
	if !utf8.Valid(s.args) {
		return invalid(KindInvalidArguments, "the arguments are not valid UTF-8")
	}
	if !json.Valid(s.args) {
		return invalid(KindInvalidArguments, "the arguments are not valid JSON: "+syntaxDetail(s.args))
	}
	args := bytes.Trim(s.args, " \t\r\n") // JSON whitespace only: the rest is the value
	if args[0] != '{' {
		return invalid(KindInvalidArguments, "the arguments must be a JSON object, not "+jsonKind(args[0]))
	}
	c.Call.Arguments = json.RawMessage(args)
	return c
}

// syntaxDetail says where invalid JSON breaks. Only called on the failure
// path, so the valid path builds no error values.
func syntaxDetail(b []byte) string {
	var v json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

// jsonKind names the JSON type starting with c, for the error detail.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// InvalidCall says why a call could not be assembled.
type InvalidCall struct {
	// Kind is KindUnknownTool (no name arrived) or KindInvalidArguments
	// (not valid UTF-8 JSON, or not an object).
	Kind string
	// Detail is the sentence the model reads.
	Detail string
	// Name is the name as received; empty when none arrived.
	Name string
	// RawArguments is the argument text as received.
	RawArguments string
}

// AssembledCall is one call of a finished response, valid or not.
type AssembledCall struct {
	// Index is the provider's index of the call.
	Index int
	// Call is the call as the assistant message records it. For a valid
	// call, the arguments as received (a JSON object; {} when none came).
	// For an invalid call, its name (KindUnknownTool when none arrived) and
	// {} arguments, so the context stays valid and the error result
	// explains.
	Call messages.ToolCall
	// ProviderData is the call's provider round-trip data, verbatim; nil
	// when none came.
	ProviderData []byte
	// Invalid is nil for a valid call.
	Invalid *InvalidCall
}

// ErrorResult is the error result answering an invalid call, and false for
// a valid one.
func (c AssembledCall) ErrorResult() (messages.ToolResult, bool) {
	if c.Invalid == nil {
		return messages.ToolResult{}, false
	}
	return ErrorResult(c.Call, c.Invalid.Kind, c.Invalid.Detail), true
}

// Response is a finished model response. Its slices are shared with the
// messages built from it; nothing here modifies them.
type Response struct {
	// Text is the text deltas in order.
	Text string
	// Calls are every call of the response, valid and invalid, in index
	// order.
	Calls []AssembledCall
	// ProviderData is the response's provider round-trip data, verbatim;
	// nil when none came.
	ProviderData []byte
}

// ValidCalls returns the valid calls in index order, the ones to run.
func (r *Response) ValidCalls() []messages.ToolCall {
	var out []messages.ToolCall
	for _, c := range r.Calls {
		if c.Invalid == nil {
			out = append(out, c.Call)
		}
	}
	return out
}

// ErrorResults returns the answers to the invalid calls in index order.
func (r *Response) ErrorResults() []messages.ToolResult {
	var out []messages.ToolResult
	for _, c := range r.Calls {
		if res, ok := c.ErrorResult(); ok {
			out = append(out, res)
		}
	}
	return out
}

// AssistantMessage is the assistant message recording the response in the
// context: the text, every call in index order (invalid ones as
// AssembledCall.Call describes) and the response's provider data. There is
// none, false, when the response has no text and no call; provider data
// alone does not count, since an empty assistant message is invalid.
//
// Each call carries its own provider data (a Gemini thought signature), so
// the adapter can send it back verbatim with the call in the next request.
func (r *Response) AssistantMessage() (Message, bool) {
	if r.Text == "" && len(r.Calls) == 0 {
		return Message{}, false
	}
	var calls []messages.ToolCall
	if len(r.Calls) > 0 {
		calls = make([]messages.ToolCall, len(r.Calls))
		for i, c := range r.Calls {
			calls[i] = c.Call
			calls[i].ProviderData = c.ProviderData
		}
	}
	m := Assistant(r.Text, calls)
	m.ProviderData = r.ProviderData
	return m, true
}
