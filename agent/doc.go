// Package agent is the conversation domain of a call, pure and actor-free:
// the context of messages and its rules, the bounded window of it that a
// request carries (Window), played-text truncation, and tool
// specs, the registry and running tools through small interfaces. The llm and
// tools actors own instances of these types; nothing here reads a clock
// directly, and the one goroutine it starts is a tool's own, in RunCall, so
// a tool that ignores its context cannot hold its caller past the timeout.
//
// It imports only the standard library, messages, the JSON lexer it shares
// with the providers (agent/jsonlex) and the JSON Schema validator of tool
// arguments (santhosh-tekuri/jsonschema/v6, draft 2020-12,
// compiled offline; golang.org/x/text formats its messages).
package agent
