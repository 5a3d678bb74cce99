package chaostest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// heardSlack is how many words the context may lack at the end of a cut
// answer against what the caller heard: the pacer leaves out a word that
// began inside its lead margin, and its heard position is bounded by the
// newest mark echo, which trails the caller's playout by up to an echo
// period (100 ms) and the trip back. Never more than heard.
const heardSlack = 2

// checkCall runs every checker on r and joins what they found: the
// invariants, which hold however slow the machine is.
func checkCall(r *callRecord) error {
	errs := []error{checkEnded(r), checkNoStaleAudio(r), checkContextHeard(r), checkTools(r)}
	if r.HungUpAt.IsZero() {
		errs = append(errs, checkAnswered(r))
	}
	if r.Fault == "" {
		errs = append(errs, checkHealthy(r))
	}
	return errors.Join(errs...)
}

// disturbed tells how a healthy call's conversation did not go as
// scripted, or "": an answer that did not play out (the next question
// or the hang-up came first) or questions merged into one turn. Each
// answer has 2.3-3 s to spare, so only a machine too slow to keep the
// calls in real time disturbs them: it is counted and reported, not an
// invariant.
func disturbed(r *callRecord) string {
	users := userTurns(r)
	if len(users) != 3 {
		return fmt.Sprintf("%d user turns, want 3", len(users))
	}
	for _, u := range users {
		if !playedOut(r, u.Epoch) {
			return fmt.Sprintf("the answer of epoch %d did not play out", u.Epoch)
		}
	}
	return ""
}

func violation(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrViolation}, args...)...)
}

// checkEnded: the server reported the call's end with a reason, and the
// caller was told it (unless it dropped the connection itself).
func checkEnded(r *callRecord) error {
	switch {
	case r.Ended == nil:
		return violation("the server never reported the call's end")
	case r.Ended.Reason == "":
		return violation("the call ended without a reason")
	case r.Fault != FaultHangUpAbrupt && r.CloseReason == "":
		return violation("the caller's websocket closed without a reason (code %d)", r.CloseCode)
	}
	return nil
}

// checkNoStaleAudio: after the k-th clear (whose epoch the transport's
// tap recorded), no audio of an older epoch reaches the caller; every
// audio frame carries a stamp; the server found no message of the caller
// bad.
func checkNoStaleAudio(r *callRecord) error {
	var floor messages.Epoch
	k := 0
	for i, w := range r.Wire {
		switch w.Kind {
		case wireClear:
			if k >= len(r.Clears) {
				return violation("receipt %d: clear %d came, the transport sent %d", i, k+1, len(r.Clears))
			}
			floor = max(floor, r.Clears[k])
			k++
		case wireAudio:
			if w.Epoch < floor {
				return violation("receipt %d: audio of epoch %d (frame %d) after a clear to epoch %d: stale", i, w.Epoch, w.Seq, floor)
			}
		}
	}
	if r.Unstamped > 0 {
		return violation("%d audio frames without a stamp", r.Unstamped)
	}
	if r.ErrorReplies > 0 {
		return violation("the server answered %d messages of the caller with an error", r.ErrorReplies)
	}
	return nil
}

// played is the frames of epoch e that began to play at the caller: not
// dropped by a clear before their start, and started before the caller
// hung up.
func played(r *callRecord, e messages.Epoch) map[int]bool {
	out := map[int]bool{}
	for i, w := range r.Wire {
		if w.Kind != wireAudio || w.Epoch != e {
			continue
		}
		if !r.HungUpAt.IsZero() && !w.Start.Before(r.HungUpAt) {
			continue
		}
		heard := true
		for _, c := range r.Wire[i+1:] {
			if c.Kind == wireClear {
				heard = w.Start.Before(c.At)
				break
			}
		}
		if heard {
			out[w.Seq] = true
		}
	}
	return out
}

// heardWords are the words of epoch e the caller heard, in order: each
// word whose first frame began to play (words start on the frame grid:
// the mock speaks whole frames).
func heardWords(r *callRecord, e messages.Epoch) []string {
	frames := played(r, e)
	var out []string
	for _, w := range r.Words[e] {
		if !frames[int(w.Offset/messages.FrameDuration)] {
			break
		}
		out = append(out, w.Text)
	}
	return out
}

// turn is a user message of a request and the assistant words after it.
type turn struct {
	user string
	said []string
}

func turnsOf(msgs []agent.Message) []turn {
	var out []turn
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser:
			out = append(out, turn{user: m.Text})
		case agent.RoleAssistant:
			if len(out) > 0 {
				out[len(out)-1].said = append(out[len(out)-1].said, strings.Fields(m.Text)...)
			}
		}
	}
	return out
}

// userTurns are the user turns the server reported, in order.
func userTurns(r *callRecord) []messages.CallEvent {
	var out []messages.CallEvent
	for _, e := range r.Events {
		if e.Kind == messages.EventUserTurn {
			out = append(out, e)
		}
	}
	return out
}

// playedOut tells whether the answer of epoch e played to its end (the
// server's bot_done without cut).
func playedOut(r *callRecord, e messages.Epoch) bool {
	for _, ev := range r.Events {
		if ev.Kind == messages.EventBotDone && ev.Epoch == e {
			return !ev.Cut
		}
	}
	return false
}

// checkContextHeard: in the model's last request, every answered turn's
// assistant words are what the caller heard of that turn's answer:
// exactly for an answer that played out, a prefix lacking at most
// heardSlack words for a cut one (any number for the slow consumer),
// never a word more. The user messages are the turns the server
// reported, in order.
func checkContextHeard(r *callRecord) error {
	if len(r.Requests) == 0 {
		return nil
	}
	turns := turnsOf(r.Requests[len(r.Requests)-1].Messages)
	users := userTurns(r)
	if len(turns) > len(users) {
		return violation("%d user messages in the context, %d user turns reported", len(turns), len(users))
	}
	// The last user message's answer was still to come.
	for i, t := range turns[:max(len(turns)-1, 0)] {
		e := users[i].Epoch
		if t.user != users[i].Text {
			return violation("user message %d is not the turn reported (epoch %d)", i, e)
		}
		heard := heardWords(r, e)
		got := t.said
		if len(got) > len(heard) || !slices.Equal(got, heard[:len(got)]) {
			return violation("turn %d (epoch %d): the context holds %q, the caller heard %q", i, e, got, heard)
		}
		slack := heardSlack
		switch {
		case r.Fault == FaultSlowConsumer:
			// A slow reader's backlog sits in the kernel's socket
			// buffers, which a clear cannot overtake (TCP keeps order):
			// it plays what the engine cut after its confirmed
			// position. Only "never more than heard" holds.
			slack = len(heard)
		case playedOut(r, e):
			slack = 0
		}
		if len(heard)-len(got) > slack {
			return violation("turn %d (epoch %d): the context %q lacks heard words %q (slack %d)", i, e, got, heard, slack)
		}
	}
	return nil
}

// reaches says whether m gives the model run's result: its tool message,
// or, for a call closed before its result came (its round closed by a cut
// or a failed answer: the call answered "interrupted"), the late-result
// note that the llm stage adds once it came (agent.PushLateToolResult).
// Found by chaos at 200 callers (seed 1, c0174-1, panic_tts+tool): a tts
// restart on the booking's preamble failed that answer, so its round
// closed and the booking's result reached the next request as a note.
func reaches(m agent.Message, run toolRun) bool {
	switch m.Role {
	case agent.RoleTool:
		return m.ToolCallID == run.CallID && strings.Contains(m.Text, run.Result)
	case agent.RoleSystem:
		return strings.HasPrefix(m.Text, "Late result: the earlier call "+run.CallID+" of tool "+run.Name+" ") &&
			strings.Contains(m.Text, run.Result)
	}
	return false
}

// checkTools: a SideEffect ran at most once per call for the same
// arguments and per idempotency key; every result reached every request
// made after it was done (reaches); every tool call in a request is
// answered once.
func checkTools(r *callRecord) error {
	byArgs, byKey := map[string]int{}, map[string]int{}
	for _, run := range r.Runs {
		byArgs[run.Name+" "+run.Args]++
		if run.Key != "" {
			byKey[run.Key]++
		}
	}
	for k, n := range byArgs {
		if n > 1 {
			return violation("%s ran %d times", k, n)
		}
	}
	for _, n := range byKey {
		if n > 1 {
			return violation("one idempotency key ran %d times", n)
		}
	}
	for _, run := range r.Runs {
		for i, req := range r.Requests {
			if !req.At.After(run.Done) {
				continue
			}
			if !slices.ContainsFunc(req.Messages, func(m agent.Message) bool { return reaches(m, run) }) {
				return violation("request %d, made after %s call %s was done, lacks its result", i, run.Name, run.CallID)
			}
		}
	}
	for i, req := range r.Requests {
		answers := map[string]int{}
		for _, m := range req.Messages {
			if m.Role == agent.RoleTool {
				answers[m.ToolCallID]++
			}
		}
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if answers[c.ID] != 1 {
					return violation("request %d: tool call %s answered %d times", i, c.ID, answers[c.ID])
				}
			}
		}
	}
	return nil
}

// checkAnswered: a call that ran its script to the end had its last
// question put to the model: whatever failed before, the call recovered
// (the answer's audio may come after the caller's hang-up on a slow
// machine: that is not checked).
func checkAnswered(r *callRecord) error {
	users := userTurns(r)
	if len(users) == 0 {
		return violation("no user turn was reported")
	}
	last := users[len(users)-1]
	for _, req := range r.Requests {
		if t := turnsOf(req.Messages); len(t) > 0 && t[len(t)-1].user == last.Text {
			return nil
		}
	}
	return violation("the last question (epoch %d) never reached the model", last.Epoch)
}

// checkHealthy: no stage of a call without a fault restarted.
func checkHealthy(r *callRecord) error {
	if r.Ended != nil {
		for s, n := range r.Ended.Restarts {
			if n > 0 {
				return violation("a healthy call restarted %s %d times", s, n)
			}
		}
	}
	return nil
}

// engineAdded is each answered turn's engine-added latency as the server
// saw it: first audio out minus the VAD's decision minus the providers'
// scripted latencies on the path (the STT final, the model's first token,
// the TTS's first byte; a booking's first audio is the text before its
// tool, so the tool's time is not on it). No turn policy delay is set.
func engineAdded(r *callRecord, p *plan) []time.Duration {
	var out []time.Duration
	for _, e := range r.Events {
		if e.Kind != messages.EventLatency {
			continue
		}
		fa, ok1 := e.Marks[messages.MarkFirstAudioOut]
		vd, ok2 := e.Marks[messages.MarkVADDetected]
		if !ok1 || !ok2 {
			continue
		}
		out = append(out, fa.Sub(vd)-p.sttFinal-p.llmFirst-p.ttsFirst)
	}
	return out
}
