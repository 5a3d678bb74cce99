package jsonscan

import "github.com/brisvox/brisvox/agent/jsonlex"

// ErrJSON is wrapped by every error of a Scanner: the data is not JSON,
// or not of the shape the decoder asked for. The detail names an offset
// and what was expected, never the data itself (it may be a transcript or
// a tool's arguments). It is the lexer's own sentinel, so an error from
// either wraps one sentinel.
var ErrJSON = jsonlex.ErrSyntax
