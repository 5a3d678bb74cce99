// Package tools runs the model's tool calls for the call's rounds. ReadOnly
// calls run in goroutines under the asking epoch's context, so an interrupt
// cancels them. Each SideEffect call runs in a child actor of its own
// ("call-<id>"), which belongs to the tools actor and not to the round: it
// finishes even when the round that asked is gone, and its result then
// reaches the llm actor as a late result. Results of one request are always
// returned in the order of the calls. Each call is traced once at debug
// level when it settles, and again when a late result comes (observe.go).
// The actor applies the whole tool contract of docs/TOOLS.md: admission
// (malformed calls answered, the turn's retry budget, duplicates), the
// idempotency record and its orphans, speculation (SideEffect calls of a
// speculative turn held until its commit), confirmation (confirm_pending)
// and the SideEffect backstop; fillers are the llm actor's.
package tools
