package llm

import "errors"

// Sentinel errors of the package; errors returned here wrap them, as
// fmt.Errorf("%w: detail", ErrX).
var (
	// ErrInvalidConfig marks a bad Config.
	ErrInvalidConfig = errors.New("llm: invalid config")

	// ErrBudgetExhausted is the reason of a turn whose malformed tool
	// rounds spent the retry budget.
	ErrBudgetExhausted = errors.New("llm: retry budget for malformed tool calls spent")

	// ErrMaxRounds is the reason of a round loop that hit Config.MaxRounds.
	ErrMaxRounds = errors.New("llm: too many tool rounds")
)
