package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/brisvox/brisvox/agent"
)

// KeyPresser presses keys on a call: the serve layer implements it with
// the call's conn.DTMFSender. SendDTMF blocks until every digit was sent
// (or ctx ends). digits are valid (ValidDigits); an implementation never
// logs them.
type KeyPresser interface {
	SendDTMF(ctx context.Context, session, digits string) error
}

// MaxDigits is send_dtmf's bound (the schema's).
const MaxDigits = 32

// ValidDigits tells whether s is 1 to MaxDigits of 0-9, *, #, A-D: the
// schema's pattern, checked again in code.
func ValidDigits(s string) bool {
	if len(s) == 0 || len(s) > MaxDigits {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '*' || c == '#' || c >= 'A' && c <= 'D') {
			return false
		}
	}
	return true
}

// SendDTMF returns the send_dtmf tool (agent.SendDTMFSpec):
// send_dtmf(digits) checks the digits again and asks kp to press them,
// answering {"status":"sent","digits":N}, N their count. The digits are
// not echoed: the model knows what it asked for, and a result may reach
// a call record where a PIN must not. Bad digits are invalid arguments;
// a failure (a call that cannot send keys) wraps ErrDTMF.
func SendDTMF(kp KeyPresser) agent.Tool {
	return &sendDTMF{spec: agent.SendDTMFSpec(), kp: kp}
}

type sendDTMF struct {
	spec agent.Spec
	kp   KeyPresser
}

var _ agent.Tool = (*sendDTMF)(nil)

func (t *sendDTMF) Spec() agent.Spec { return t.spec }

func (t *sendDTMF) Call(ctx context.Context, args json.RawMessage, call agent.CallInfo) (agent.Output, error) {
	var a struct {
		Digits string `json:"digits"`
	}
	if err := json.Unmarshal(args, &a); err != nil || !ValidDigits(a.Digits) {
		return agent.Output{}, fmt.Errorf("%w: %w", &agent.ArgumentError{
			Kind:   agent.KindInvalidArguments,
			Detail: "digits must be 1 to 32 of 0-9, *, # and A-D; nothing was sent",
			Issues: []agent.Issue{{Path: "/digits", Reason: "not 1 to 32 of 0-9, *, #, A-D"}},
		}, ErrBadDigits)
	}
	if call.Session == "" {
		return agent.Output{}, fmt.Errorf("%w: %w: the call is not known", ErrDTMF, ErrNoSession)
	}
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	if t.kp == nil {
		return agent.Output{}, fmt.Errorf("%w: pressing keys is not available here", ErrDTMF)
	}
	if err := t.kp.SendDTMF(ctx, call.Session, a.Digits); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return agent.Output{}, err
		}
		return agent.Output{}, fmt.Errorf("%w: %w", ErrDTMF, err)
	}
	return agent.Output{Content: `{"status":"sent","digits":` + strconv.Itoa(len(a.Digits)) + `}`}, nil
}
