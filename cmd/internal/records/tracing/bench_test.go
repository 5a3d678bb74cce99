package tracing

import (
	"maps"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/brisvox/brisvox/messages"
)

// turnEvents is one tool turn's events as the session hands them over,
// epoch e: the caller's turn, two rounds, a tool call's two lines, the
// latency, ten words, the end, and the state changes around them.
func turnEvents(e messages.Epoch) []messages.CallEvent {
	marks := turnMarks()
	evs := []messages.CallEvent{
		{Kind: messages.EventUserSpeaking, At: ms(100)},
		{Kind: messages.EventUserTurn, Epoch: e, Text: plantedSaid, At: ms(1000)},
		{Kind: messages.EventState, Epoch: e, State: messages.StateThinking, At: ms(1000)},
		{Kind: messages.EventRound, Epoch: e, Round: 1, At: ms(1400)},
		{Kind: messages.EventTool, Epoch: e, Text: "book_table", Call: "call_1", Outcome: messages.CallRunning, At: ms(1450)},
		{Kind: messages.EventTool, Epoch: e, Text: "book_table", Call: "call_1", Outcome: messages.CallDone, At: ms(1600),
			Audit: &messages.ToolAudit{Outcome: "ok", Started: ms(1450)}},
		{Kind: messages.EventRound, Epoch: e, Round: 2, At: ms(1800)},
		{Kind: messages.EventLatency, Epoch: e, Latency: 1300 * time.Millisecond, Stages: messages.TurnStages(marks), Marks: maps.Clone(marks), At: ms(2000)},
		{Kind: messages.EventState, Epoch: e, State: messages.StateSpeaking, At: ms(2000)},
	}
	for range 10 {
		evs = append(evs, messages.CallEvent{Kind: messages.EventBotWord, Epoch: e, Text: plantedWord, At: ms(2100)})
	}
	return append(evs, messages.CallEvent{Kind: messages.EventBotDone, Epoch: e, At: ms(3000)},
		messages.CallEvent{Kind: messages.EventState, Epoch: e, State: messages.StateListening, At: ms(3000)})
}

// BenchmarkTurnEvents is a turn's cost on the session's goroutine: its
// 21 events through Call.Event, the call's buffer emptied after each turn
// as the tracer's goroutine would (kept off the call here, so its span
// building neither competes nor counts in the allocations).
func BenchmarkTurnEvents(b *testing.B) {
	col := newCollector(b)
	tr, err := New(b.Context(), Config{Endpoint: col.srv.URL, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	c := tr.Begin("call-bench", "pcm", "bench", t0)
	hold(c, true)
	evs := turnEvents(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range evs {
			evs[j].Epoch = messages.Epoch(i + 1)
			c.Event(&evs[j])
		}
		takeBuffer(c)
	}
	b.StopTimer()
	hold(c, false)
	c.End(messages.CallEnded{Reason: "hangup"})
	if err := tr.Close(b.Context()); err != nil {
		b.Fatal(err)
	}
}

// hold keeps the tracer's goroutine off c (on) or lets it back (off).
func hold(c *Call, on bool) {
	c.t.mu.Lock()
	c.scheduled = on
	c.t.mu.Unlock()
}

// takeBuffer empties c's buffer as the tracer's goroutine does (swapping
// in the spare), returning what was in it.
func takeBuffer(c *Call) []item {
	c.mu.Lock()
	items := c.pending
	c.pending, c.spare = c.spare[:0], items[:0]
	c.mu.Unlock()
	return items
}

// BenchmarkTurnBuild is what building a turn's spans costs (the tracer's
// goroutine pays it): were it on the session's goroutine, this is what a
// turn would cost there.
func BenchmarkTurnBuild(b *testing.B) {
	col := newCollector(b)
	tr, err := New(b.Context(), Config{Endpoint: col.srv.URL, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	c := tr.Begin("call-bench", "pcm", "bench", t0)
	items := bufferOf(b, c, turnEvents(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range items {
			it := items[j]
			it.epoch = messages.Epoch(i + 1)
			c.apply(&it)
		}
	}
	b.StopTimer()
	c.End(messages.CallEnded{Reason: "hangup"})
	if err := tr.Close(b.Context()); err != nil {
		b.Fatal(err)
	}
}

// bufferOf is what c.Event buffers of evs, taken out of the call before
// the tracer's goroutine sees it.
func bufferOf(tb testing.TB, c *Call, evs []messages.CallEvent) []item {
	tb.Helper()
	hold(c, true)
	defer hold(c, false)
	for i := range evs {
		c.Event(&evs[i])
	}
	return append([]item(nil), takeBuffer(c)...)
}
