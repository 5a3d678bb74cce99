package agent

import (
	"errors"
	"strconv"
)

// Sentinel errors of the package. Every error returned here wraps one of
// them, as fmt.Errorf("%w: detail", ErrX), so callers (supervision deciders,
// the llm actor) can branch with errors.Is without parsing text.
var (
	// ErrInvalidContext: the context breaks an ordering rule a provider
	// would reject (an unanswered or twice answered call, an empty assistant
	// message). Returned by Context.Validate as a *ContextError.
	ErrInvalidContext = errors.New("agent: invalid context")

	// ErrUnknownRole: a message in the JSON form carries a role this package
	// does not know, or fields that its role does not use.
	ErrUnknownRole = errors.New("agent: unknown role")

	// ErrUnknownTool: no tool of that name is registered (Registry.Subset;
	// RunCall answers unknown_tool instead of failing).
	ErrUnknownTool = errors.New("agent: unknown tool")

	// ErrDuplicateTool: a tool of that name is already registered. The first
	// one is kept.
	ErrDuplicateTool = errors.New("agent: duplicate tool")

	// ErrInvalidSpec: a tool's spec cannot be offered to a model (bad name,
	// negative timeout, parameters that are not an object schema, an
	// undeclared effect).
	ErrInvalidSpec = errors.New("agent: invalid tool spec")

	// ErrCallOpen: a note was pushed while a tool call had no result yet.
	ErrCallOpen = errors.New("agent: a tool call is open")

	// ErrInvalidWindowConfig: a WindowConfig whose bound is positive but
	// under MinWindowTokens.
	ErrInvalidWindowConfig = errors.New("agent: invalid window config")
)

// ContextError says where and why a Context is invalid. It wraps
// ErrInvalidContext; Index lets a caller drop or repair the offending
// message without parsing the text.
type ContextError struct {
	Index  int
	Reason string
}

// Error implements error.
func (e *ContextError) Error() string {
	return ErrInvalidContext.Error() + ": message " + strconv.Itoa(e.Index) + ": " + e.Reason
}

// Unwrap makes errors.Is(err, ErrInvalidContext) hold.
func (e *ContextError) Unwrap() error { return ErrInvalidContext }
