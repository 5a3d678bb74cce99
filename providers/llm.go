package providers

import (
	"context"
	"encoding/json"

	"github.com/brisvox/brisvox/agent"
)

// LLM streams responses of a chat model.
type LLM interface {
	// Stream sends req and returns its response as a stream. Cancelling
	// ctx stops the response: the stream returns the context's error.
	Stream(ctx context.Context, req *Request) (LLMStream, error)
	// Warm opens a connection ahead of the first request.
	Warm(ctx context.Context) error
}

// RequestWarmer is an LLM with a second warm-up probe, for a server that
// does not answer Warm's (an OpenAI-compatible server without the model
// list). The caller chooses the probe; neither is tried after the other.
type RequestWarmer interface {
	// WarmRequest sends a minimal real request (one short user message,
	// the answer capped at one token), streamed as Stream streams and
	// read to its end, bounded by ctx.
	WarmRequest(ctx context.Context) error
	// WarmProbes names what Warm and WarmRequest send, as the method and
	// the path under the base URL ("GET /models", "POST
	// /chat/completions"): never a host, a query or a key, so a message
	// can name the probe that failed.
	WarmProbes() (warm, request string)
}

// ToolDef is a tool offered to the model.
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Request is one request to the model. The slices are the caller's and
// must not be changed by the provider.
type Request struct {
	Messages []agent.Message
	Tools    []ToolDef
}

// LLMStream is a streaming response. Recv blocks until the next event and
// returns io.EOF after the Done event.
type LLMStream interface {
	Recv() (LLMEvent, error)
	// Close releases the response; safe to call more than once.
	Close() error
}

// LLMEventKind tells the events of a response apart.
type LLMEventKind int

// The kinds of response events.
const (
	// LLMText carries a piece of the answer's text.
	LLMText LLMEventKind = iota + 1
	// LLMToolCall carries a fragment of a tool call: Index names the call;
	// ID and Name are set on the first fragment; Args is a piece of the
	// JSON arguments.
	LLMToolCall
	// LLMDone ends the response.
	LLMDone
	// LLMProviderData carries opaque data of the whole response that the
	// vendor needs back verbatim in the next request (a thinking block's
	// signature): ProviderData. (Data of one call rides on its LLMToolCall
	// fragment.)
	LLMProviderData
	// LLMUsage reports the tokens of the response (Usage).
	LLMUsage
)

// LLMEvent is one event of a response.
type LLMEvent struct {
	Kind  LLMEventKind
	Text  string
	Index int
	ID    string
	Name  string
	Args  string
	// ProviderData: for LLMToolCall, opaque data of that call (a Gemini
	// thought signature); for LLMProviderData, of the response. Sent back
	// verbatim; never logged.
	ProviderData []byte
	// Usage is set on LLMUsage.
	Usage Usage
	// StopReason is set on LLMDone: why the response ended, in the
	// vendor's words ("stop", "tool_calls", "end_turn", ...). StopLength
	// (any vendor's "the token limit cut it") is normalised, so the engine
	// can tell a cut answer from a finished one.
	StopReason string
}

// StopLength is the StopReason of a response cut by its token limit.
const StopLength = "length"

// Usage counts a response's tokens, as the vendor reports them.
type Usage struct {
	InputTokens, OutputTokens, CachedInputTokens int
}
