package sim

import "errors"

// Sentinels of the simulator, wrapped with detail as fmt.Errorf("%w: ...").
// Provider failures that a real service would cause are the typed errors of
// package providers instead, so the code under test sees what production
// sees.
var (
	// ErrInvalidScenario: a scenario was built with a step that cannot be
	// played (too short, negative) or has no steps.
	ErrInvalidScenario = errors.New("sim: invalid scenario")
	// ErrInvalidConfig: a mock's configuration has a negative duration or
	// rate; Connect (or Stream) fails with it.
	ErrInvalidConfig = errors.New("sim: invalid mock config")
	// ErrScriptExhausted: the mock LLM was asked for more responses than
	// its script holds; the test forgot a Push.
	ErrScriptExhausted = errors.New("sim: mock script exhausted")
	// ErrContextClosed: text was pushed to (or a flush asked of) a TTS
	// context that was already flushed or cancelled.
	ErrContextClosed = errors.New("sim: tts context closed")
)
