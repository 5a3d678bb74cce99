package providertest

import "errors"

// Sentinels of the fakes, wrapped with detail as fmt.Errorf("%w: ...").
// Provider failures that a real service would cause are the typed errors
// of package providers instead (an injected Fault), so the code under test
// sees what production sees.
var (
	// ErrInvalidConfig: a mock's configuration has a negative duration or
	// rate; Connect (or Stream) fails with it.
	ErrInvalidConfig = errors.New("providertest: invalid mock config")
	// ErrScriptExhausted: the mock LLM was asked for more responses than
	// its script holds; the test forgot a Push.
	ErrScriptExhausted = errors.New("providertest: mock script exhausted")
	// ErrContextClosed: text was pushed to (or a flush asked of) a TTS
	// context that was already flushed or cancelled.
	ErrContextClosed = errors.New("providertest: tts context closed")
)
