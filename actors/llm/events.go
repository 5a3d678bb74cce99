package llm

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// The llm stage's events for the call record, sent only when the call is
// observed (peers.Events): an EventUsage per usage report of a response
// (vendors send one per response) with the provider's vendor and model,
// and an EventRound per round of the tool loop at its first token (sent
// by the round, beside its MarkLLMFirstToken). A speculative turn's
// rounds are told too: their tokens were spent, discarded or not.

// tellUsage puts a response's tokens in the call record (an EventUsage),
// when the call is observed: one event per usage report, which a vendor
// sends once per response.
func (a *Actor) tellUsage(s actor.SenderContext, m *usage) {
	if !a.peers.Events {
		return
	}
	a.peers.Event(s, &messages.CallEvent{Kind: messages.EventUsage, Epoch: m.epoch, At: m.at, Usage: &messages.ProviderUsage{
		Kind: messages.UsageLLM, Vendor: a.vendor, Model: a.model,
		InputTokens: max(m.u.InputTokens, 0), OutputTokens: max(m.u.OutputTokens, 0), CachedTokens: max(m.u.CachedInputTokens, 0)}})
}
