// Package agent is the conversation domain of a call, pure and actor-free:
// the context of messages and its rules, played-text truncation, and tool
// specs, the registry and running tools through small interfaces. The llm and
// tools actors own instances of these types; nothing here starts a goroutine
// or reads a clock.
//
// It imports only messages.
package agent
