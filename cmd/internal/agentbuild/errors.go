package agentbuild

import "errors"

// Errors of the builder.
var (
	// ErrOption: the provider's option table refused an option (the file
	// was not checked against the same table: a bug, reported as such).
	ErrOption = errors.New("agentbuild: option not mapped")
	// ErrUnknownProvider: a provider name the builder does not know.
	ErrUnknownProvider = errors.New("agentbuild: unknown provider")
	// ErrUnknownTool: a tool name the catalogue does not hold.
	ErrUnknownTool = errors.New("agentbuild: unknown tool")
	// ErrWarm: a warm-up probe failed (WarmError, which also wraps the
	// provider's error).
	ErrWarm = errors.New("agentbuild: warm-up failed")
	// ErrDomain: [stt] domain = "llm" with a language model that has no
	// phrases to bias the recognizer to.
	ErrDomain = errors.New("agentbuild: no domain phrases")
	// ErrWarmMode: a stage's warm setting names a probe its provider does
	// not offer.
	ErrWarmMode = errors.New("agentbuild: warm probe not offered")
)
