package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// The tool lines of the caller's page: an EventTool when a call starts
// (running) and one when it settles, saying what happened in the page's
// words (messages.Call*), with the tool's summary or a few words on why.
// They are live events for the call's own participants, never logs: the
// page's fields hold no arguments and no result content. A settled line
// also carries the call record's audit (messages.ToolAudit: the contract's
// outcome, the start, the key's digest, the arguments and result), which
// the page never shows. A SideEffect call whose slot was answered while it
// ran (timed_out_running, interrupted_running) settles twice: its final
// line (the late result, or lost at a restart) supersedes the first.

// confirmationSubject names a confirm_pending line whose held tool is not
// known (the gate refused it).
const confirmationSubject = "confirmation"

// lineOf reads a settled call for the page: the outcome, its detail, and
// the tool the line is about when it is not the called one.
func lineOf(call messages.ToolCall, r messages.ToolResult) (outcome, detail, subject string) {
	if call.Name == agent.ConfirmPendingTool {
		subject = confirmationSubject
		if r.Name != "" && r.Name != call.Name {
			subject = r.Name // the held tool that ran
		}
	}
	switch r.Outcome {
	case agent.OutcomeOK, agent.OutcomeOKTruncated, outcomeRecorded:
		return messages.CallDone, r.Summary, subject
	case outcomeHeld:
		return messages.CallHeld, "waiting for your yes", subject
	case outcomeTimedOutRunning:
		return messages.CallRunning, "taking longer than expected", subject
	case outcomeInterruptedRunning:
		return messages.CallRunning, "still running after the interruption", subject
	case agent.OutcomeInterrupted, outcomeNotStarted:
		return messages.CallCancelled, "interrupted", subject
	case agent.KindStaleTurn:
		return messages.CallCancelled, "the turn was over", subject
	case agent.OutcomeDuplicate, outcomeRepeatRefused:
		return messages.CallRefused, "already done", subject
	case agent.KindBudgetExhausted:
		return messages.CallRefused, "too many malformed requests", subject
	case outcomeStoreFull:
		return messages.CallRefused, "too many calls in flight", subject
	case agent.KindUnknownTool, agent.KindInvalidArguments, agent.KindArgumentsTooLarge:
		return messages.CallRefused, "the request was malformed", subject
	case agent.OutcomeTimedOut:
		return messages.CallFailed, "timed out", subject
	case agent.OutcomeLost:
		return messages.CallFailed, "its outcome is unknown", subject
	case agent.OutcomeResultTooLarge:
		return messages.CallFailed, "its answer was too large", subject
	}
	if call.Name == agent.ConfirmPendingTool && r.Name == call.Name {
		return messages.CallRefused, r.Summary, subject // the gate's refusal
	}
	return messages.CallFailed, "it failed", subject
}

// slotAudit is what the call record keeps of a call beyond its result:
// when it started and its idempotency key's digest. A round keeps one per
// slot, and a SideEffect flight its own copy, only while the call is
// observed (peers.Events): nothing is kept otherwise.
type slotAudit struct {
	started   time.Time
	keyDigest string
}

// keyDigest is the sha256 (hex) of a SideEffect call's idempotency key in
// its external form (IdempotencyKey.String(), what the tool passed to a
// downstream API): the record can be matched with the downstream's logs
// without holding the key.
func keyDigest(k agent.IdempotencyKey) string {
	sum := sha256.Sum256([]byte(k.String()))
	return hex.EncodeToString(sum[:])
}

// tellStart puts a call's running line on the page, stamped at.
func (a *Actor) tellStart(s actor.SenderContext, epoch messages.Epoch, call messages.ToolCall, at time.Time) {
	subject := ""
	if call.Name == agent.ConfirmPendingTool {
		subject = confirmationSubject
	}
	a.peers.Event(s, &messages.CallEvent{Kind: messages.EventTool, Epoch: epoch, Text: call.Name, Call: call.ID,
		Outcome: messages.CallRunning, Subject: subject, At: at})
}

// tellSettled puts what a settled call did on the page, with the record's
// audit of it (au; a call that never started is stamped at its admission
// by the caller). Args are the call's as the model sent them, shared, not
// copied: nobody writes a ToolCall's arguments after the assembler.
func (a *Actor) tellSettled(s actor.SenderContext, epoch messages.Epoch, call messages.ToolCall, r messages.ToolResult, au slotAudit) {
	if !a.peers.Events {
		return
	}
	outcome, detail, subject := lineOf(call, r)
	a.peers.Event(s, &messages.CallEvent{Kind: messages.EventTool, Epoch: epoch, Text: call.Name, Call: call.ID,
		Outcome: outcome, Detail: detail, Subject: subject, At: time.Now(),
		Audit: &messages.ToolAudit{Outcome: r.Outcome, Started: au.started, KeyDigest: au.keyDigest, Args: call.Arguments, Result: r.Content}})
}
