package agent

import (
	"slices"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

func admitRegistry(t *testing.T) *Registry {
	t.Helper()
	reg, err := NewRegistry(specTool(se("book", "")), specTool(ro("lookup", "")),
		specTool(with(se("pay", ""), func(s *Spec) { s.Confirm = true })))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// pcall is a call with a provider id.
func pcall(id, pid, name, args string) messages.ToolCall {
	c := tc(id, name, args)
	c.ProviderID = pid
	return c
}

// outcomesOf lists each answer's outcome ("run" for a call let through).
func outcomesOf(rs []messages.ToolResult) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Outcome
		if r.CallID == "" {
			out[i] = "run"
		}
	}
	return out
}

// TestPlanRound: each call of a round is planned in issue order; the
// cases of the tools actor's tests carried over as pure rules. (Mutations
// seen failing: no provider-id check — the second booking runs; the
// provider-id check applied to ReadOnly calls — the second lookup is
// refused; confirm_pending's call_id not checked — it runs without one.)
func TestPlanRound(t *testing.T) {
	reg := admitRegistry(t)
	tests := []struct {
		name           string
		gated          bool
		calls          []messages.ToolCall
		want           []string
		malformed, dup int
	}{
		{"unknown, broken and valid", false,
			[]messages.ToolCall{tc("t1.0", "nope", `{}`), tc("t1.1", "lookup", `{"q": `), tc("t1.2", "lookup", `{}`)},
			[]string{KindUnknownTool, KindInvalidArguments, "run"}, 2, 0},
		{"same provider id, SideEffect", false,
			[]messages.ToolCall{pcall("t1.0", "same", "book", `{"a":1}`), pcall("t1.1", "same", "book", `{"a":2}`)},
			[]string{"run", OutcomeDuplicate}, 0, 1},
		{"same provider id, ReadOnly", false,
			[]messages.ToolCall{pcall("t1.0", "twin", "lookup", `{}`), pcall("t1.1", "twin", "lookup", `{}`)},
			[]string{"run", "run"}, 0, 0},
		{"no provider id is no duplicate", false,
			[]messages.ToolCall{tc("t1.0", "book", `{}`), tc("t1.1", "book", `{}`)},
			[]string{"run", "run"}, 0, 0},
		{"a malformed call's provider id is not seen", false,
			[]messages.ToolCall{pcall("t1.0", "x", "book", `[`), pcall("t1.1", "x", "book", `{}`)},
			[]string{KindInvalidArguments, "run"}, 1, 0},
		{"confirm_pending gated, with its call_id", true,
			[]messages.ToolCall{tc("t1.0", ConfirmPendingTool, `{"call_id":"t0.0"}`)},
			[]string{"run"}, 0, 0},
		{"confirm_pending gated, without a call_id", true,
			[]messages.ToolCall{tc("t1.0", ConfirmPendingTool, `{}`), tc("t1.1", ConfirmPendingTool, `{"call_id":7}`)},
			[]string{KindInvalidArguments, KindInvalidArguments}, 2, 0},
		{"confirm_pending not offered", false,
			[]messages.ToolCall{tc("t1.0", ConfirmPendingTool, `{"call_id":"t0.0"}`)},
			[]string{KindUnknownTool}, 1, 0},
		{"none", false, nil, []string{}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanRound(reg, tt.gated, tt.calls)
			if got := outcomesOf(p.Answers); !slices.Equal(got, tt.want) {
				t.Errorf("outcomes %v, want %v", got, tt.want)
			}
			if p.Malformed != tt.malformed || p.Duplicates != tt.dup {
				t.Errorf("malformed %d duplicates %d, want %d and %d", p.Malformed, p.Duplicates, tt.malformed, tt.dup)
			}
			for i, r := range p.Answers {
				if r.CallID != "" && (r.CallID != tt.calls[i].ID || !r.IsError) {
					t.Errorf("answer %d: %+v, want an error result of %s", i, r, tt.calls[i].ID)
				}
			}
			if runs, want := p.Runs(), len(tt.want)-tt.malformed-tt.dup; runs != want {
				t.Errorf("Runs() = %d, want %d", runs, want)
			}
		})
	}
}

// TestRetryBudget: a turn may spend two rounds with malformed calls; the
// third is refused budget_exhausted, and so is every later round of the
// turn. A valid round in between does not refund the budget; a newer turn
// starts a fresh one; a stale round is refused and spends nothing. The
// steps run in order on one budget. (Mutations seen failing: the count
// refunded by a valid round; the budget compared with >= instead of >;
// the budget not reset at a newer turn.)
func TestRetryBudget(t *testing.T) {
	var b RetryBudget
	steps := []struct {
		name          string
		epoch, min    messages.Epoch
		malformed     int
		want          Admission
		retries, left int // left: Spent after the step
	}{
		{"malformed 1", 1, 1, 1, Admitted, 0, 1},
		{"valid: no refund", 1, 1, 0, Admitted, 1, 1},
		{"malformed 2 still runs", 1, 1, 1, Admitted, 1, 2},
		{"malformed 3 exhausted", 1, 1, 1, RefusedBudget, 2, 3},
		{"valid after exhaustion", 1, 1, 0, RefusedBudget, 3, 3},
		{"stale round of the newest turn", 1, 2, 1, RefusedStale, 3, 3},
		{"newer turn starts afresh", 3, 2, 0, Admitted, 0, 0},
		{"stale round of an older turn traces 0", 2, 3, 1, RefusedStale, 0, 0},
	}
	for _, s := range steps {
		got, retries := b.Admit(s.epoch, s.min, s.malformed)
		if got != s.want || retries != s.retries || b.Spent != s.left {
			t.Errorf("%s: %v retries %d spent %d, want %v retries %d spent %d", s.name, got, retries, b.Spent, s.want, s.retries, s.left)
		}
	}
}

// TestAdmitHeld: a call held by a speculative round runs at its commit
// unless its turn went stale or spent its budget since; it spends
// nothing. (Mutation seen failing: a held call of an older turn than the
// newest seen run at the commit.)
func TestAdmitHeld(t *testing.T) {
	tests := []struct {
		name       string
		budget     RetryBudget
		epoch, min messages.Epoch
		want       Admission
	}{
		{"committed turn", RetryBudget{Turn: 1, Spent: 2}, 1, 1, Admitted},
		{"a newer turn was seen", RetryBudget{Turn: 2}, 1, 1, RefusedStale},
		{"interrupted", RetryBudget{Turn: 1}, 1, 2, RefusedStale},
		{"budget spent since", RetryBudget{Turn: 1, Spent: 3}, 1, 1, RefusedBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.budget
			if got := tt.budget.AdmitHeld(tt.epoch, tt.min); got != tt.want {
				t.Errorf("%v, want %v", got, tt.want)
			}
			if tt.budget != before {
				t.Errorf("the budget changed: %+v", tt.budget)
			}
		})
	}
}

// TestRefusedResults: a round refused whole answers every call, the valid
// ones too, with the verdict's kind as content and outcome. (Mutation
// seen failing: Admitted answering the calls budget_exhausted.)
func TestRefusedResults(t *testing.T) {
	calls := []messages.ToolCall{tc("t1.0", "book", `{}`), tc("t1.1", "nope", `{}`)}
	tests := []struct {
		a    Admission
		want []string
	}{
		{RefusedStale, []string{KindStaleTurn, KindStaleTurn}},
		{RefusedBudget, []string{KindBudgetExhausted, KindBudgetExhausted}},
		{Admitted, []string{"run", "run"}},
	}
	for _, tt := range tests {
		t.Run(tt.a.String(), func(t *testing.T) {
			rs := RefusedResults(tt.a, calls)
			if got := outcomesOf(rs); !slices.Equal(got, tt.want) {
				t.Errorf("outcomes %v, want %v", got, tt.want)
			}
			for i, r := range rs {
				if r.CallID != "" && (r.CallID != calls[i].ID || !r.IsError) {
					t.Errorf("answer %d: %+v", i, r)
				}
			}
		})
	}
}
