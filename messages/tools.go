package messages

import "encoding/json"

// ToolCall is one call the model asked for, as assembled from the stream.
// ID is the engine's own id (t<epoch>.<seq>, minted by the context), stable
// across rounds and retries of a turn; ProviderID is the id the provider
// gave, kept for the round trip.
type ToolCall struct {
	ID           string
	ProviderID   string
	Name         string
	Arguments    json.RawMessage
	ProviderData []byte
}

// ToolResult answers one ToolCall. Content is the text the model reads;
// IsError marks an error result. Outcome names how the call settled, with
// the contract's outcome names (ok, ok_truncated, failed, timed_out, lost,
// ...); it is for the engine's record and logs, never sent to the model.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
	Outcome string
	// Summary is the call's short caller-facing line (agent.Output.Summary,
	// or why a confirmation was refused), for the call's live events only:
	// never sent to the model, never logged.
	Summary string
}

// RunTools asks the tools actor to run Calls for a round; the round sends
// it with Request, and the answer goes to it (the sender): a ToolResults
// with one result per call, in the order of Calls. Malformed
// counts the calls of the response already answered as malformed (the
// assembler could not read them): they count toward the turn's retry
// budget, which the tools actor keeps.
type RunTools struct {
	Epoch     Epoch
	Round     int
	Calls     []ToolCall
	Malformed int
	// Speculative: the round belongs to a speculative turn. Its ReadOnly
	// calls run; its SideEffect calls are held until the turn's Commit,
	// which the round passes on after its RunTools (and never run after a
	// Discard).
	Speculative bool
}

// ToolResults answers RunTools. BudgetExhausted says the turn spent its
// retry budget for malformed rounds: nothing ran, every call was answered
// budget_exhausted, and the turn ends with the fallback line.
type ToolResults struct {
	Epoch           Epoch
	Round           int
	Results         []ToolResult
	BudgetExhausted bool
}

// ToolDone is sent by one tool call's actor to the tools actor.
type ToolDone struct {
	Epoch  Epoch
	Round  int
	Index  int
	Result ToolResult
}

// RoundEnded is a round's last word to the tools actor, sent when it
// stops: Waiting says it had asked for Round's results and did not take
// them. The tools actor reports the SideEffect results of such a round
// (answered already, or still running) as late notes and marks those calls
// as orphans, so a regenerated identical call is answered from the record
// instead of running again.
type RoundEnded struct {
	Epoch   Epoch
	Round   int
	Waiting bool
}

// LateResult is the tools actor's report of a SideEffect call's result that
// reached no round: the call finished after its slot was answered (at its
// timeout) or after its round was gone (a barge-in, a newer turn). The llm
// actor adds it to the context as a note, once, at a point where no call
// is open.
type LateResult struct {
	Epoch  Epoch
	Result ToolResult
}
