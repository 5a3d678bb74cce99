package chaostest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

var t0 = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

// at is an offset from t0.
func at(d time.Duration) time.Time { return t0.Add(d) }

// answer appends n frames of epoch e arriving 20 ms apart from from, each
// playing on arrival.
func answer(r *callRecord, e messages.Epoch, from time.Duration, n int) {
	for i := range n {
		a := at(from + time.Duration(i)*messages.FrameDuration)
		r.Wire = append(r.Wire, wireRec{Kind: wireAudio, At: a, Epoch: e, Seq: i, Start: a})
	}
}

func words(ws ...string) []spoken {
	var out []spoken
	for i, w := range ws {
		out = append(out, spoken{Text: w, Offset: time.Duration(2*i) * messages.FrameDuration})
	}
	return out
}

// goodRecord is a healthy call that keeps every invariant: three
// questions, each answer played to its end (two frames a word) and held
// in the model's last request exactly.
func goodRecord() *callRecord {
	r := &callRecord{
		Name: "good", CloseCode: 1000, CloseReason: "client hung up",
		Words: map[messages.Epoch][]spoken{1: words("Of", "course", "Friday"), 2: words("Done", "then"), 3: words("Goodbye")},
		Ended: &messages.CallEnded{Reason: "hangup", Restarts: map[messages.Stage]int{messages.StageTTS: 0}},
	}
	answer(r, 1, time.Second, 6)
	answer(r, 2, 3*time.Second, 4)
	answer(r, 3, 5*time.Second, 2)
	for i, q := range []string{"q1", "q2", "q3"} {
		e := messages.Epoch(i + 1)
		r.Events = append(r.Events,
			messages.CallEvent{Kind: messages.EventUserTurn, Epoch: e, Text: q},
			messages.CallEvent{Kind: messages.EventBotDone, Epoch: e})
	}
	msgs := []agent.Message{
		agent.System("be brief"), agent.User("q1"), agent.Assistant("Of course Friday", nil),
		agent.User("q2"), agent.Assistant("Done then", nil), agent.User("q3"),
	}
	r.Requests = []request{{At: at(0), Messages: msgs[:2]}, {At: at(2 * time.Second), Messages: msgs[:4]}, {At: at(4 * time.Second), Messages: msgs}}
	return r
}

// bargedRecord is a call whose first answer was cut by a barge-in: five
// frames had come, the caller's buffer was three frames deep, so when the
// clear came only frames 0 and 1 had begun to play. The caller heard "Of"
// ("course" starts on frame 2, dropped from the buffer), and the context
// keeps just that.
func bargedRecord() *callRecord {
	r := goodRecord()
	r.Fault = FaultBargeIn
	r.Wire = r.Wire[:0]
	answer(r, 1, time.Second, 5)
	for i := range r.Wire {
		r.Wire[i].Start = r.Wire[i].At.Add(3 * messages.FrameDuration)
	}
	r.Wire = append(r.Wire, wireRec{Kind: wireClear, At: at(1090 * time.Millisecond)})
	answer(r, 2, 3*time.Second, 4)
	answer(r, 3, 5*time.Second, 2)
	r.Clears = []messages.Epoch{2}
	r.Events[1].Cut = true
	r.Requests[2].Messages[2] = agent.Assistant("Of", nil)
	return r
}

// bookedRecord is a healthy call whose first answer took the booking
// tool once; its result is in every request made after it was done.
func bookedRecord() *callRecord {
	r := goodRecord()
	r.Tool = true
	call := messages.ToolCall{ID: "t1.0", Name: bookTool, Arguments: []byte(`{}`)}
	r.Runs = []toolRun{{Name: bookTool, Args: `{}`, CallID: "t1.0", Key: "k1", Result: "BK-1001", Done: at(1500 * time.Millisecond)}}
	withTool := func(ms []agent.Message) []agent.Message {
		out := append([]agent.Message(nil), ms[:3]...)
		out[2].ToolCalls = []messages.ToolCall{call}
		out = append(out, agent.Message{Role: agent.RoleTool, ToolCallID: "t1.0", Text: `{"booking":"BK-1001"}`})
		return append(out, ms[3:]...)
	}
	r.Requests[1].Messages = withTool(r.Requests[1].Messages)
	r.Requests[2].Messages = withTool(r.Requests[2].Messages)
	return r
}

// lateRecord is bookedRecord whose first answer failed while the booking
// ran: its round closed, the call was answered interrupted, and the
// result reached the next request as the llm stage's late-result note.
func lateRecord() *callRecord {
	r := bookedRecord()
	for i := 1; i < len(r.Requests); i++ {
		req := &r.Requests[i]
		req.Messages = slices.Clone(req.Messages)
		req.Messages[3].Text = `{"error":"interrupted","tool":"book_table","detail":"the answer was cut short"}`
		req.Messages = slices.Insert(req.Messages, 4, agent.System(
			`Late result: the earlier call t1.0 of tool book_table (interrupted or timed out before) has finished; do not repeat it. Result: {"booking":"BK-1001"}`))
	}
	return r
}

// slowRecord is a slow consumer cut by its next question: the engine cut
// the first answer at the confirmed position (one word of five), the
// caller went on to play all it had been sent (the clear came behind it).
func slowRecord() *callRecord {
	r := goodRecord()
	r.Fault = FaultSlowConsumer
	r.Words[1] = words("Of", "course", "Friday", "or", "Monday")
	r.Wire = r.Wire[:0]
	answer(r, 1, time.Second, 10)
	answer(r, 2, 3*time.Second, 4)
	answer(r, 3, 5*time.Second, 2)
	r.Events[1].Cut = true
	r.Requests[2].Messages[2] = agent.Assistant("Of", nil)
	return r
}

func TestGoodRecordsPass(t *testing.T) {
	for name, r := range map[string]*callRecord{"healthy": goodRecord(), "barge-in": bargedRecord(), "booked": bookedRecord(), "slow": slowRecord(), "late result": lateRecord()} {
		if err := checkCall(r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCheckersFail feeds each checker a record broken the way an engine
// bug would break it; each must find it. The case names the bug.
func TestCheckersFail(t *testing.T) {
	cases := []struct {
		name    string
		check   func(*callRecord) error
		base    func() *callRecord
		breakIt func(r *callRecord)
		want    string
	}{
		{"the end never reported", checkEnded, goodRecord, func(r *callRecord) { r.Ended = nil }, "never reported"},
		{"an end without a reason", checkEnded, goodRecord, func(r *callRecord) { r.Ended.Reason = "" }, "without a reason"},
		{"the caller not told why", checkEnded, goodRecord, func(r *callRecord) { r.CloseReason = "" }, "closed without a reason"},
		{"audio of the cut answer after the clear", checkNoStaleAudio, bargedRecord, func(r *callRecord) {
			late := wireRec{Kind: wireAudio, At: at(1100 * time.Millisecond), Epoch: 1, Seq: 5, Start: at(1100 * time.Millisecond)}
			r.Wire = append(r.Wire[:6], append([]wireRec{late}, r.Wire[6:]...)...)
		}, "stale"},
		{"a clear the transport never sent", checkNoStaleAudio, bargedRecord, func(r *callRecord) { r.Clears = nil }, "the transport sent 0"},
		{"audio without a stamp", checkNoStaleAudio, goodRecord, func(r *callRecord) { r.Unstamped = 1 }, "without a stamp"},
		{"the server refused a message", checkNoStaleAudio, goodRecord, func(r *callRecord) { r.ErrorReplies = 1 }, "with an error"},
		{"the context keeps a word that came but was cleared before it played", checkContextHeard, bargedRecord, func(r *callRecord) {
			r.Requests[2].Messages[2] = agent.Assistant("Of course", nil)
		}, "the caller heard"},
		{"the context lacks a word of an answer that played out", checkContextHeard, goodRecord, func(r *callRecord) {
			r.Requests[2].Messages[2] = agent.Assistant("Of course", nil)
		}, "lacks heard words"},
		{"the context lacks more than the slack of a cut answer", checkContextHeard, goodRecord, func(r *callRecord) {
			r.Events[1].Cut = true
			r.Requests[2].Messages[2] = agent.Assistant("", nil) // heard three words, kept none
		}, "lacks heard words"},
		{"a slow consumer's context holds a word it never heard", checkContextHeard, slowRecord, func(r *callRecord) {
			r.Requests[2].Messages[2] = agent.Assistant("Of course Friday Goodbye", nil)
		}, "the caller heard"},
		{"the context's turns are not the caller's", checkContextHeard, goodRecord, func(r *callRecord) {
			r.Requests[2].Messages[3] = agent.User("something else")
		}, "not the turn reported"},
		{"more user messages than turns", checkContextHeard, goodRecord, func(r *callRecord) { r.Events = r.Events[:2] }, "user turns reported"},
		{"the booking ran twice", checkTools, bookedRecord, func(r *callRecord) {
			again := r.Runs[0]
			again.CallID, again.Key = "t1.1", "k2"
			r.Runs = append(r.Runs, again)
		}, "ran 2 times"},
		{"one idempotency key ran twice", checkTools, bookedRecord, func(r *callRecord) {
			again := r.Runs[0]
			again.Args = `{"day":"monday"}`
			r.Runs = append(r.Runs, again)
		}, "one idempotency key ran 2 times"},
		{"a result that never reached the model", checkTools, bookedRecord, func(r *callRecord) {
			r.Requests[2].Messages = r.Requests[0].Messages
		}, "lacks its result"},
		{"a late note without the result", checkTools, lateRecord, func(r *callRecord) {
			r.Requests[2].Messages[4] = agent.System("Late result: the earlier call t1.0 of tool book_table (interrupted or timed out before) has finished; do not repeat it. Result: {}")
		}, "lacks its result"},
		{"a late note of another call", checkTools, lateRecord, func(r *callRecord) {
			r.Requests[2].Messages[4].Text = strings.Replace(r.Requests[2].Messages[4].Text, "t1.0", "t9.9", 1)
		}, "lacks its result"},
		{"a tool call left unanswered", checkTools, goodRecord, func(r *callRecord) {
			r.Requests[2].Messages[2].ToolCalls = []messages.ToolCall{{ID: "t1.0", Name: bookTool}}
		}, "answered 0 times"},
		{"the last question never put to the model", checkAnswered, goodRecord, func(r *callRecord) { r.Requests = r.Requests[:2] }, "never reached the model"},
		{"a healthy call restarted a stage", checkHealthy, goodRecord, func(r *callRecord) { r.Ended.Restarts[messages.StageTTS] = 1 }, "restarted tts"},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			r := tc.base()
			if err := tc.check(r); err != nil {
				t.Fatalf("the record before it was broken fails: %v", err)
			}
			tc.breakIt(r)
			err := tc.check(r)
			if !errors.Is(err, ErrViolation) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a violation saying %q", err, tc.want)
			}
			if checkCall(r) == nil {
				t.Fatal("checkCall missed it")
			}
		})
	}
}

// TestDisturbed: a healthy call whose answer was cut, or whose questions
// merged, is told apart; a call that went as scripted is not (mutation
// seen failing: playedOut read as "any bot_done").
func TestDisturbed(t *testing.T) {
	if d := disturbed(goodRecord()); d != "" {
		t.Fatalf("a call as scripted is disturbed: %s", d)
	}
	cut := goodRecord()
	cut.Events[3].Cut = true
	merged := goodRecord()
	merged.Events = merged.Events[:4]
	for name, r := range map[string]*callRecord{"cut": cut, "merged": merged} {
		if disturbed(r) == "" {
			t.Errorf("%s: not disturbed", name)
		}
	}
}

func TestEngineAdded(t *testing.T) {
	p := &plan{sttFinal: 150 * msec, llmFirst: 300 * msec, ttsFirst: 200 * msec}
	r := &callRecord{Events: []messages.CallEvent{
		{Kind: messages.EventLatency, Marks: map[messages.MarkKind]time.Time{
			messages.MarkVADDetected: at(time.Second), messages.MarkFirstAudioOut: at(time.Second + 653*msec),
		}},
		{Kind: messages.EventLatency}, // no marks: not measured
	}}
	got := engineAdded(r, p)
	if len(got) != 1 || got[0] != 3*msec {
		t.Fatalf("engine-added %v, want [3ms]", got)
	}
}
