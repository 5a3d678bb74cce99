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
// IsError marks an error result.
type ToolResult struct {
	CallID  string
	Name    string
	Content string
	IsError bool
}

// RunTools asks the tools actor to run Calls for a round. The answer is a
// ToolResults with one result per call, in the order of Calls.
type RunTools struct {
	Epoch Epoch
	Round int
	Calls []ToolCall
}

// ToolResults answers RunTools.
type ToolResults struct {
	Epoch   Epoch
	Round   int
	Results []ToolResult
}

// ToolDone is sent by one tool call's actor to the tools actor.
type ToolDone struct {
	Epoch  Epoch
	Round  int
	Index  int
	Result ToolResult
}
