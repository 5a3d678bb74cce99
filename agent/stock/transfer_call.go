package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/brisvox/brisvox/agent"
)

// Transferer hands a call's caller to target: the serve layer implements
// it with the call's conn.Transferrer. TransferCall blocks until the
// transfer succeeded (the call then ends) or failed (the call goes on).
// target is already normalised and allowed. An error that wraps
// ErrNotSupported-like causes says why in fixed words, never the target.
type Transferer interface {
	TransferCall(ctx context.Context, session, target string) error
}

// TransferConfig is transfer_call's agent-file settings.
type TransferConfig struct {
	// Allow is where the model may transfer (required).
	Allow *Allowlist
	// NoConfirm turns the confirmation gate off; by default the model's
	// call is held until the caller agreed (Spec.Confirm).
	NoConfirm bool
	// DescribeTargets appends the allowlist's entries to the tool's
	// description, so the model knows where it may transfer without the
	// prompt saying so. Off by default: the model may read the list out
	// to a caller who asks, and an internal number is not every caller's
	// business.
	DescribeTargets bool
}

// TransferCall returns the transfer_call tool (agent.TransferCallSpec):
// transfer_call(destination, reason?) normalises the destination, refuses
// one outside cfg.Allow as invalid arguments (an *agent.ArgumentError;
// nothing is dialled), and asks tr to transfer. Success answers
// {"status":"transferred"}; a failure is an error wrapping ErrTransfer
// whose text tells the model to tell the caller and go on.
func TransferCall(tr Transferer, cfg TransferConfig) (agent.Tool, error) {
	if cfg.Allow == nil {
		return nil, fmt.Errorf("%w: transfer_call needs an allowlist", ErrAllowPattern)
	}
	s := agent.TransferCallSpec()
	s.Confirm = !cfg.NoConfirm
	if cfg.DescribeTargets {
		s.Description += " Allowed destinations (a trailing * stands for any continuation): " + strings.Join(cfg.Allow.Entries(), ", ") + "."
	}
	return &transferCall{spec: s, tr: tr, allow: cfg.Allow}, nil
}

type transferCall struct {
	spec  agent.Spec
	tr    Transferer
	allow *Allowlist
}

var _ agent.Tool = (*transferCall)(nil)

func (t *transferCall) Spec() agent.Spec { return t.spec }

// transferredResult is what the model reads after a transfer.
const transferredResult = `{"status":"transferred","message":"The caller is with the other party now; this call ends. Say nothing more."}`

// refuse is an invalid_arguments answer about the destination.
func refuse(detail string, cause error) error {
	return fmt.Errorf("%w: %w", &agent.ArgumentError{
		Kind:   agent.KindInvalidArguments,
		Detail: detail,
		Issues: []agent.Issue{{Path: "/destination", Reason: detail}},
	}, cause)
}

func (t *transferCall) Call(ctx context.Context, args json.RawMessage, call agent.CallInfo) (agent.Output, error) {
	var a struct {
		Destination string `json:"destination"`
		Reason      string `json:"reason"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return agent.Output{}, refuse("the arguments are not {\"destination\": string, \"reason\": string}", ErrBadDestination)
	}
	target, ok, err := t.allow.Allows(a.Destination)
	switch {
	case err != nil:
		return agent.Output{}, refuse("the destination is not a phone number in E.164 form (+33123456789) or a SIP URI (sip:desk@example.com); nothing was dialled", err)
	case !ok:
		return agent.Output{}, refuse("this destination is not one this agent may transfer to; nothing was dialled: tell the caller you cannot transfer them there", ErrNotAllowed)
	}
	if call.Session == "" {
		return agent.Output{}, fmt.Errorf("%w: %w: the call is not known: go on with the call", ErrTransfer, ErrNoSession)
	}
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	if t.tr == nil {
		return agent.Output{}, fmt.Errorf("%w: transferring is not available here: tell the caller and go on with the call", ErrTransfer)
	}
	if err := t.tr.TransferCall(ctx, call.Session, target); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return agent.Output{}, err
		}
		return agent.Output{}, fmt.Errorf("%w: %w; tell the caller and go on with the call", ErrTransfer, err)
	}
	return agent.Output{Content: transferredResult, Summary: "transferred"}, nil
}
