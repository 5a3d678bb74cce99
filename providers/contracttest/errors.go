package contracttest

import "errors"

// Sentinels of the contract suite, wrapped with detail as
// fmt.Errorf("%w: ...").
var (
	// ErrInvalidConfig: a Config, Deadlines or MockHarnessConfig has a
	// negative value, or RunLLM was given no provider or harness.
	ErrInvalidConfig = errors.New("contract: invalid config")
	// ErrHang: a provider call or an awaited event did not return within
	// the suite's bound (3 x the io timeout).
	ErrHang = errors.New("contract: call did not return within its bound")
	// ErrBroken: a broken double failed on purpose (WarmFails).
	ErrBroken = errors.New("contract: broken double")
)

// ErrEnded: a session's events channel closed while the suite still
// waited for an event.
var ErrEnded = errors.New("contract: events channel closed")
