package tools

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// The tool lines of the caller's page: an EventTool when a call starts
// (running) and one when it settles, saying what happened in the page's
// words (messages.Call*), with the tool's summary or a few words on why.
// They are live events for the call's own participants, never logs: no
// arguments, no result content.

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

// tellStart puts a call's running line on the page.
func (a *Actor) tellStart(s actor.SenderContext, epoch messages.Epoch, call messages.ToolCall) {
	subject := ""
	if call.Name == agent.ConfirmPendingTool {
		subject = confirmationSubject
	}
	a.peers.Event(s, &messages.CallEvent{Kind: messages.EventTool, Epoch: epoch, Text: call.Name, Call: call.ID,
		Outcome: messages.CallRunning, Subject: subject, At: time.Now()})
}

// tellSettled puts what a settled call did on the page.
func (a *Actor) tellSettled(s actor.SenderContext, epoch messages.Epoch, call messages.ToolCall, r messages.ToolResult) {
	outcome, detail, subject := lineOf(call, r)
	a.peers.Event(s, &messages.CallEvent{Kind: messages.EventTool, Epoch: epoch, Text: call.Name, Call: call.ID,
		Outcome: outcome, Detail: detail, Subject: subject, At: time.Now()})
}
