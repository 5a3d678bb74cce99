package contract

import (
	"time"

	"github.com/brisvox/brisvox/sim"
)

// Call is a scripted tool call: the provider streams it as one or more
// fragments, the first carrying ID and Name, whose Args join to Args.
type Call struct {
	ID, Name string
	// Args is the call's JSON arguments.
	Args string
}

// Response is a scripted answer: Text as text deltas (the suite writes one
// word per delta; a provider may cut it differently, the deltas must join
// to Text), then Calls.
type Response struct {
	Text  string
	Calls []Call
}

// LLMHarness drives the service behind an LLM adapter under test: the sim's
// MockLLM (MockHarness) or an adapter's mock server.
type LLMHarness interface {
	// Reset drops what is scripted or injected and not yet used; the suite
	// calls it at the start of every check.
	Reset()
	// Script queues r as the answer to the next stream.
	Script(r Response)
	// Inject queues f for the next stream: FaultReject refuses it,
	// FaultConnectStall delays its connect, FaultDisconnect, FaultProtocol,
	// FaultStall and FaultDelay act before its event BeforeEvent.
	Inject(f sim.Fault)
	// EventsSent counts the response events the service has produced so
	// far, over all streams: the cancel check reads it to see whether
	// generation goes on after a drop.
	EventsSent() int
	// IOTimeout is the deadline the adapter was configured with, for the
	// connect, the first event and every later gap.
	IOTimeout() time.Duration
}
