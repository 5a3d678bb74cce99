// Package jsonlex is the module's one JSON lexer: the grammar of white
// space, strings (their escapes, surrogate pairs and UTF-8) and numbers, as
// encoding/json accepts and decodes them, written once as index-based
// functions over the raw bytes that allocate nothing (AppendContent grows
// only the buffer it is given).
//
// Two readers of outside JSON stand on it: the fast validator of a tool
// call's arguments in package agent (the model's output, checked against
// the tool's schema without building a value) and the pull scanner of the
// providers' stream decoders (providers/internal/jsonscan: the LLM deltas
// and TTS messages). Each keeps its own walk of objects and arrays and its
// own semantics (the validator refuses what it does not model, the scanner
// reads values as encoding/json decoding into a struct does); what a
// string, an escape or a number is, they both take from here, so the two
// cannot drift apart. It sits in agent/ because the agent layer may import
// only messages and itself, and the providers may import agent.
//
// A scan that fails reports a Fault, what the grammar expected, and the
// offset where it stopped; Fault.Expected words it for an error message,
// which never quotes the data (it may be a transcript or a tool's
// arguments).
package jsonlex
