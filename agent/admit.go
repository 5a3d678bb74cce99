package agent

import (
	"encoding/json"
	"errors"

	"github.com/brisvox/brisvox/messages"
)

// Admission of a round of tool calls (the contract's steps 1 and 2), as
// pure rules: the tools actor keeps the state (the turn's RetryBudget) and
// runs what these rules let through.
//
//   - A round of a superseded turn is refused whole: every call is
//     answered stale_turn and nothing runs.
//   - Each call is planned in issue order (PlanRound): an unknown tool,
//     arguments over the cap or failing their schema, and a
//     confirm_pending without a call_id are malformed and answered at
//     once; a second SideEffect call with the provider id of an earlier
//     one is answered duplicate_call.
//   - A round with a malformed call (the assembler's included) spends the
//     turn's budget, which never goes down within the turn; a round past
//     MaxInvalidRounds is refused whole: every call is answered
//     budget_exhausted.

// MaxInvalidRounds is the turn's retry budget: rounds with a malformed
// call beyond it run nothing (budget_exhausted). The count never goes down
// within the turn.
const MaxInvalidRounds = 2

// OutcomeDuplicate is the outcome of a second SideEffect call of a
// response with the provider id of an earlier one (answered
// duplicate_call).
const OutcomeDuplicate = "duplicate"

// Admission is the verdict on a whole round.
type Admission int

// The verdicts on a round.
const (
	// Admitted: the round's planned calls run.
	Admitted Admission = iota
	// RefusedStale: the round's turn was superseded (stale_turn).
	RefusedStale
	// RefusedBudget: the turn spent its retry budget (budget_exhausted).
	RefusedBudget
)

// String names the verdict with the kind its calls are answered.
func (a Admission) String() string {
	switch a {
	case Admitted:
		return "admitted"
	case RefusedStale:
		return KindStaleTurn
	case RefusedBudget:
		return KindBudgetExhausted
	}
	return "admission(?)"
}

// Plan is what PlanRound decided for each call of a round, in issue
// order.
type Plan struct {
	// Answers holds the answer of each call refused here; a call that
	// runs has the zero result (CallID "").
	Answers []messages.ToolResult
	// Malformed counts the calls refused as malformed.
	Malformed int
	// Duplicates counts the SideEffect calls refused duplicate_call.
	Duplicates int
}

// Runs counts the calls the plan lets run.
func (p Plan) Runs() int {
	n := 0
	for _, r := range p.Answers {
		if r.CallID == "" {
			n++
		}
	}
	return n
}

// PlanRound plans a round's calls in issue order against the registry.
// gated says the registry has a tool declared with Confirm, so that
// confirm_pending is offered (and checked here). The answers carry their
// outcome.
func PlanRound(reg *Registry, gated bool, calls []messages.ToolCall) Plan {
	p := Plan{Answers: make([]messages.ToolResult, len(calls))}
	seen := map[string]bool{}
	for i, c := range calls {
		_, spec, ok := reg.Lookup(c.Name)
		var res messages.ToolResult
		switch {
		case gated && c.Name == ConfirmPendingTool:
			if ConfirmTarget(c.Arguments) == "" {
				res = ErrorResult(c, KindInvalidArguments, "confirm_pending needs the call_id of the request, as a string")
				res.Outcome = KindInvalidArguments
			}
		case !ok:
			res = ErrorResult(c, KindUnknownTool, "no tool of this name is available")
			res.Outcome = KindUnknownTool
		default:
			if err := reg.ValidateArguments(c.Name, c.Arguments); err != nil {
				var aerr *ArgumentError
				if errors.As(err, &aerr) {
					res = aerr.Result(c)
					res.Outcome = aerr.Kind // invalid_arguments or arguments_too_large
				} else {
					res = ErrorResult(c, KindInvalidArguments, "the arguments could not be checked")
					res.Outcome = KindInvalidArguments
				}
			}
		}
		if res.CallID != "" {
			p.Malformed++
			p.Answers[i] = res
			continue
		}
		if spec.Effect == SideEffect && c.ProviderID != "" {
			if seen[c.ProviderID] {
				p.Duplicates++
				p.Answers[i] = ErrorResult(c, KindDuplicateCall, "this call repeats the id of an earlier call of the same response; it did not run")
				p.Answers[i].Outcome = OutcomeDuplicate
				continue
			}
			seen[c.ProviderID] = true
		}
	}
	return p
}

// RefusedResults answers every call of a round refused whole (stale_turn
// or budget_exhausted), in issue order, with its outcome.
func RefusedResults(a Admission, calls []messages.ToolCall) []messages.ToolResult {
	out := make([]messages.ToolResult, len(calls))
	for i, c := range calls {
		out[i] = RefusedResult(a, c)
	}
	return out
}

// RefusedResult answers one call of a round refused whole; Admitted has
// no answer (the zero result).
func RefusedResult(a Admission, c messages.ToolCall) messages.ToolResult {
	var r messages.ToolResult
	switch a {
	case RefusedStale:
		r = ErrorResult(c, KindStaleTurn, "this turn was superseded; the call did not run")
	case RefusedBudget:
		r = ErrorResult(c, KindBudgetExhausted, "too many malformed tool calls in this turn; nothing ran: tell the caller what you can without tools")
	default:
		return r
	}
	r.Outcome = a.String()
	return r
}

// RetryBudget is the newest turn's spent retry budget: the rounds of it
// that had a malformed call. The zero value is a budget before any turn.
type RetryBudget struct {
	// Turn is the newest turn seen; Spent its rounds with a malformed
	// call.
	Turn  messages.Epoch
	Spent int
}

// Admit decides a round of turn epoch with malformed calls, given the
// oldest live epoch. It spends the budget for a round with a malformed
// call and moves it to a newer turn. retries is the number of malformed
// rounds the turn had spent before this one (the call's trace): a stale
// round of an older turn than the newest seen traces 0.
func (b *RetryBudget) Admit(epoch, minEpoch messages.Epoch, malformed int) (verdict Admission, retries int) {
	if epoch < minEpoch {
		if epoch == b.Turn {
			return RefusedStale, b.Spent
		}
		return RefusedStale, 0
	}
	if epoch > b.Turn {
		b.Turn, b.Spent = epoch, 0
	}
	retries = b.Spent
	if malformed > 0 {
		b.Spent++
	}
	if b.Spent > MaxInvalidRounds {
		return RefusedBudget, retries
	}
	return Admitted, retries
}

// AdmitHeld decides a call that a speculative round of turn epoch held,
// at the turn's commit: it is stale once a newer turn was seen or the
// epoch is older than minEpoch, and refused budget_exhausted when its turn
// spent the budget since. It spends nothing.
func (b RetryBudget) AdmitHeld(epoch, minEpoch messages.Epoch) Admission {
	switch {
	case epoch < minEpoch || epoch < b.Turn:
		return RefusedStale
	case epoch == b.Turn && b.Spent > MaxInvalidRounds:
		return RefusedBudget
	}
	return Admitted
}

// ConfirmTarget reads confirm_pending's call_id, or "" when there is none.
func ConfirmTarget(args []byte) string {
	var a struct {
		CallID string `json:"call_id"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	return a.CallID
}
