package stock

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/brisvox/brisvox/agent"
)

// Ender ends a call: the serve layer implements it, asking the call to
// hang up once the answer being spoken has played. EndCall must not block
// on the hang-up itself, and a second EndCall for the same session must do
// no harm (the engine runs end_call once per call, but a caller of
// RunCall may not).
type Ender interface {
	EndCall(session, reason string) error
}

// EndCall returns the end_call tool (agent.EndCallSpec: SideEffect, no
// filler): end_call(reason?) asks ender to end the call of
// CallInfo.Session and answers {"status":"ending", ...}, telling the model
// that nothing it says next is heard. A call without a session is an error
// wrapping ErrNoSession; an error of ender, one wrapping ErrEndCall.
func EndCall(ender Ender) agent.Tool {
	return &endCall{spec: agent.EndCallSpec(), ender: ender}
}

type endCall struct {
	spec  agent.Spec
	ender Ender
}

var _ agent.Tool = (*endCall)(nil)

func (t *endCall) Spec() agent.Spec { return t.spec }

// endCallResult is what the model reads after end_call.
const endCallResult = `{"status":"ending","message":"The call ends once your last words have played. Say nothing more."}`

func (t *endCall) Call(ctx context.Context, args json.RawMessage, call agent.CallInfo) (agent.Output, error) {
	var a struct {
		Reason string `json:"reason"`
	}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return agent.Output{}, fmt.Errorf("the arguments are not {\"reason\": string}: %v", err)
		}
	}
	if call.Session == "" {
		return agent.Output{}, fmt.Errorf("%w: the call is not known: go on with the call", ErrNoSession)
	}
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	if t.ender == nil {
		return agent.Output{}, fmt.Errorf("%w: hanging up is not available here: go on with the call", ErrEndCall)
	}
	if err := t.ender.EndCall(call.Session, a.Reason); err != nil {
		return agent.Output{}, fmt.Errorf("%w: %w: tell the caller they can hang up", ErrEndCall, err)
	}
	return agent.Output{Content: endCallResult}, nil
}
