package agentbuild

import "errors"

// Errors of the builder.
var (
	// ErrOption: a provider option has no place in the provider's config
	// (the schema and the config disagree: a bug, reported as such).
	ErrOption = errors.New("agentbuild: option not mapped")
	// ErrUnknownProvider: a provider name the builder does not know.
	ErrUnknownProvider = errors.New("agentbuild: unknown provider")
	// ErrUnknownTool: a tool name the catalogue does not hold.
	ErrUnknownTool = errors.New("agentbuild: unknown tool")
)
