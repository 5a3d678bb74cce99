package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// Bounds of the confirmation gate.
const (
	// ConfirmTTL is how long a request waits for its confirmation.
	ConfirmTTL = 120 * time.Second
	// MaxPendingConfirmations bounds the requests waiting at once; the
	// oldest goes first.
	MaxPendingConfirmations = 8
)

// Sentinels of the confirmation gate; ConfirmError wraps one of them.
var (
	ErrNoPendingRequest = errors.New("agent: no pending request with this call_id")
	ErrConfirmTooSoon   = errors.New("agent: the user has not replied since the request")
	ErrConfirmStale     = errors.New("agent: the confirmation is older than the request")
	ErrConfirmExpired   = errors.New("agent: the request expired")
)

// ConfirmPendingSpec is the spec of confirm_pending, offered to the model
// when a registry holds a tool with Confirm set (see OfferedSpecs).
func ConfirmPendingSpec() Spec {
	s := NewSpec(ConfirmPendingTool,
		"Confirms an action that needs the user's confirmation, after the user clearly agreed in their reply. Pass the call_id of the request.",
		SideEffect)
	s.Parameters = json.RawMessage(`{"type":"object","properties":{"call_id":{"type":"string","minLength":1,"maxLength":64}},"required":["call_id"],"additionalProperties":false}`)
	s.FillerAfter = -1
	return s
}

// OfferedSpecs is what the model is offered: the registry's specs, and
// confirm_pending when one of them needs confirmation.
func OfferedSpecs(r *Registry) []Spec {
	specs := r.Specs()
	for _, s := range specs {
		if s.Confirm {
			return append(specs, ConfirmPendingSpec())
		}
	}
	return specs
}

// pending is one held request.
type pending struct {
	call   messages.ToolCall
	epoch  messages.Epoch
	at     time.Time
	digest uint64
}

// Confirmations is a session's confirmation gate: the requests of tools
// declared with Confirm wait here until the model confirms them after a
// later user turn. Not safe for concurrent use (the tools actor owns it);
// time is passed in.
type Confirmations struct {
	reqs []pending
	// lastReply is when the newest ended user turn's speech began: a
	// request made before it has been answered by the user.
	lastReply time.Time
}

// Request holds a gated call and answers it with the confirmation_required
// result (not an error). A repeated call with the same tool and arguments
// replaces its pending request; past MaxPendingConfirmations the oldest is
// dropped.
func (c *Confirmations) Request(call messages.ToolCall, epoch messages.Epoch, now time.Time) messages.ToolResult {
	d := ArgumentsDigest(call.Name, call.Arguments)
	kept := c.reqs[:0]
	for _, p := range c.reqs {
		if p.digest != d || p.call.Name != call.Name {
			kept = append(kept, p)
		}
	}
	c.reqs = append(kept, pending{call: call, epoch: epoch, at: now, digest: d})
	if len(c.reqs) > MaxPendingConfirmations {
		c.reqs = c.reqs[len(c.reqs)-MaxPendingConfirmations:]
	}
	body, _ := json.Marshal(struct {
		Status  string `json:"status"`
		Tool    string `json:"tool"`
		CallID  string `json:"call_id"`
		Message string `json:"message"`
	}{"confirmation_required", call.Name, call.ID,
		"Not done yet: this action needs the user's confirmation. Tell the user exactly what you are about to do and ask them to confirm. Only if the user clearly agrees in their NEXT reply, call confirm_pending with this call_id. If they decline, change the request or say anything else, do not call it. Never confirm on your own."})
	return messages.ToolResult{CallID: call.ID, Name: call.Name, Content: string(body), Outcome: "held"}
}

// NoteUserTurn records an ended user turn whose speech began at
// speechStart. Only a turn whose speech began after a request answers it:
// speech already going on when the model asked is not the reply.
func (c *Confirmations) NoteUserTurn(speechStart time.Time) {
	if speechStart.After(c.lastReply) {
		c.lastReply = speechStart
	}
}

// Take hands out the held call that callID names, for a confirmation made
// in epoch at now. It refuses, with a *ConfirmError, a request that is not
// pending (or was taken: a request is taken once), expired (and drops it),
// confirmed from an older epoch, or not answered by a later user turn yet
// (the request stays pending).
func (c *Confirmations) Take(callID string, epoch messages.Epoch, now time.Time) (messages.ToolCall, error) {
	for i, p := range c.reqs {
		if p.call.ID != callID {
			continue
		}
		switch {
		case now.Sub(p.at) >= ConfirmTTL:
			c.reqs = append(c.reqs[:i], c.reqs[i+1:]...)
			return messages.ToolCall{}, &ConfirmError{Err: ErrConfirmExpired, Detail: "the request expired: ask the user again"}
		case epoch < p.epoch:
			return messages.ToolCall{}, &ConfirmError{Err: ErrConfirmStale, Detail: "this confirmation is older than the request"}
		case !c.lastReply.After(p.at):
			return messages.ToolCall{}, &ConfirmError{Err: ErrConfirmTooSoon, Detail: "the user has not replied since you asked: wait for their answer"}
		}
		c.reqs = append(c.reqs[:i], c.reqs[i+1:]...)
		return p.call, nil
	}
	return messages.ToolCall{}, &ConfirmError{Err: ErrNoPendingRequest, Detail: "no request with this call_id is waiting: it was confirmed already, expired, or cleared when the user interrupted"}
}

// Clear drops every pending request (a barge-in: the user may not have
// heard what they would confirm).
func (c *Confirmations) Clear() { c.reqs = c.reqs[:0] }

// Pending counts the requests waiting.
func (c *Confirmations) Pending() int { return len(c.reqs) }

// ConfirmError is a refused confirmation; Detail is what the model reads.
type ConfirmError struct {
	Err    error
	Detail string
}

func (e *ConfirmError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.Detail) }

// Unwrap returns the sentinel.
func (e *ConfirmError) Unwrap() error { return e.Err }

// Result answers the confirm_pending call with the refusal (tool_failed:
// the contract has no kind of its own for it).
func (e *ConfirmError) Result(call messages.ToolCall) messages.ToolResult {
	r := ErrorResult(call, KindToolFailed, e.Detail)
	r.Outcome = "failed"
	r.Summary = e.summary()
	return r
}

// summary says why the confirmation was refused, for the caller's page.
func (e *ConfirmError) summary() string {
	switch {
	case errors.Is(e.Err, ErrConfirmExpired):
		return "the request expired"
	case errors.Is(e.Err, ErrConfirmTooSoon):
		return "you had not answered yet"
	case errors.Is(e.Err, ErrConfirmStale):
		return "the confirmation came before the request"
	}
	return "nothing was waiting for your confirmation"
}
