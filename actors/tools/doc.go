// Package tools runs the model's tool calls for the call's rounds. A round
// asks with RunTools (a Request) and the actor answers that round itself;
// it keeps what it answered until the round's last word (RoundEnded) and
// reports what the round never took as late results. ReadOnly
// calls run in goroutines under the asking epoch's context, so an interrupt
// cancels them. Each SideEffect call runs in a child actor of its own
// ("call-<id>"), which belongs to the tools actor and not to the round: it
// finishes even when the round that asked is gone, and its result then
// reaches the llm actor as a late result. Results of one request are always
// returned in the order of the calls. Each call is traced once at debug
// level when it settles, and again when a late result comes (observe.go).
// The actor applies the whole tool contract of docs/TOOLS.md: admission
// (the pure rules of agent/admit.go: malformed calls answered, the turn's
// retry budget, duplicates), the
// idempotency record and its orphans, speculation (SideEffect calls of a
// speculative turn held until its commit), confirmation (confirm_pending)
// and the SideEffect backstop; fillers are the llm actor's.
package tools
