package records

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/brisvox/brisvox/messages"
)

// turnEvents are one answered turn's events as the session sends them: the
// caller speaking, their turn, two LLM rounds, a tool call, usage of each
// kind, the latency, a twelve-word answer as it plays, its end.
func turnEvents(ep messages.Epoch, now time.Time) []messages.CallEvent {
	m := map[messages.MarkKind]time.Time{
		messages.MarkVADStop: now, messages.MarkSTTFinal: now.Add(100 * time.Millisecond), messages.MarkTurnEnd: now.Add(300 * time.Millisecond),
		messages.MarkLLMRequest: now.Add(301 * time.Millisecond), messages.MarkLLMFirstToken: now.Add(600 * time.Millisecond),
		messages.MarkTTSFirstAudio: now.Add(800 * time.Millisecond), messages.MarkFirstAudioOut: now.Add(820 * time.Millisecond),
	}
	audit := &messages.ToolAudit{Outcome: "ok", Started: now.Add(601 * time.Millisecond), Args: []byte(`{"q":"x"}`), Result: "r"}
	evs := []messages.CallEvent{
		{Kind: messages.EventUserSpeaking, At: now},
		{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageSTT, Vendor: "deepgram", Model: "nova-3", Audio: 2 * time.Second}},
		{Kind: messages.EventUserTurn, Epoch: ep, Text: "I would like to book a table for four at eight", At: now},
		{Kind: messages.EventState, Epoch: ep, State: messages.StateThinking},
		{Kind: messages.EventRound, Epoch: ep, Round: 1, At: now.Add(600 * time.Millisecond)},
		{Kind: messages.EventTool, Epoch: ep, Text: "book", Call: "c1", Outcome: messages.CallRunning},
		{Kind: messages.EventTool, Epoch: ep, Text: "book", Call: "c1", Outcome: messages.CallDone, Audit: audit, At: now.Add(700 * time.Millisecond)},
		{Kind: messages.EventRound, Epoch: ep, Round: 2, At: now.Add(750 * time.Millisecond)},
		{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageLLM, Vendor: "openai", Model: "gpt-4o", InputTokens: 900, OutputTokens: 40}},
		{Kind: messages.EventLatency, Epoch: ep, Latency: 820 * time.Millisecond, Marks: m, Stages: messages.TurnStages(m), At: now.Add(820 * time.Millisecond)},
		{Kind: messages.EventState, Epoch: ep, State: messages.StateSpeaking},
	}
	for _, w := range strings.Fields("Of course, a table for four at eight is booked under your name tonight.") {
		evs = append(evs, messages.CallEvent{Kind: messages.EventBotWord, Epoch: ep, Text: w, At: now})
	}
	evs = append(evs,
		messages.CallEvent{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageTTS, Vendor: "flite", Characters: 70, Audio: 4 * time.Second}},
		messages.CallEvent{Kind: messages.EventBotDone, Epoch: ep},
		messages.CallEvent{Kind: messages.EventState, Epoch: ep, State: messages.StateListening},
	)
	return evs
}

func benchService(tb testing.TB) *Service {
	s, err := New(Config{Node: "n", NumberKey: testKey, Log: zerolog.Nop()}, newMemStore(), &memJournal{}, &memJournal{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkCallTurn is the record's cost on the session goroutine for one
// answered turn (its 30 events), in calls of 50 turns. The service is not
// started: the checkpoint it asks for finds the queue (a channel send),
// as with a writer behind it.
func BenchmarkCallTurn(b *testing.B) {
	s := benchService(b)
	now := time.Now()
	turns := make([][]messages.CallEvent, 50)
	for i := range turns {
		turns[i] = turnEvents(messages.Epoch(i+1), now)
	}
	var c *Call
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%50 == 0 {
			c = s.Begin(CallStart{CallID: "bench", Caller: "+442079460000"})
		}
		evs := turns[i%50]
		for j := range evs {
			c.Event(&evs[j])
		}
	}
}

// TestEventAllocs pins what the call path allocates. An event that only
// counts or marks (state, the caller speaking, a bot word into its line,
// the end of an answer, a latency, usage of a provider already seen, a
// later round, a checkpoint's scheduling) allocates nothing; a whole turn
// allocates at most 5 times, amortised (the caller's text, the bot's line,
// the rounds, the slices' growth). Mutation it catches (seen failing):
// copying the latency event's marks into the record's map on the call
// path.
func TestEventAllocs(t *testing.T) {
	s := benchService(t)
	now := time.Now()
	c := s.Begin(CallStart{CallID: "a"})
	for _, e := range turnEvents(1, now) {
		c.Event(&e)
	}
	word := messages.CallEvent{Kind: messages.EventBotWord, Epoch: 1, Text: "x"}
	m := map[messages.MarkKind]time.Time{messages.MarkVADStop: now, messages.MarkFirstAudioOut: now}
	for _, tc := range []struct {
		name string
		e    messages.CallEvent
	}{
		{"state", messages.CallEvent{Kind: messages.EventState, Epoch: 1, State: messages.StateSpeaking}},
		{"user speaking (barge-in)", messages.CallEvent{Kind: messages.EventUserSpeaking}},
		{"bot done", messages.CallEvent{Kind: messages.EventBotDone, Epoch: 1, Cut: true}},
		{"latency", messages.CallEvent{Kind: messages.EventLatency, Epoch: 1, Marks: m, Stages: messages.TurnStages(m)}},
		{"usage seen", messages.CallEvent{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageLLM, Vendor: "openai", Model: "gpt-4o", InputTokens: 1}}},
		{"round again", messages.CallEvent{Kind: messages.EventRound, Epoch: 1, Round: 2}},
		{"tool running", messages.CallEvent{Kind: messages.EventTool, Epoch: 1, Call: "c"}},
	} {
		if n := testing.AllocsPerRun(100, func() { c.Event(&tc.e) }); n != 0 {
			t.Errorf("%s: %v allocations, want 0", tc.name, n)
		}
	}
	// A word into a line with room.
	c.mu.Lock()
	l := c.findBotLine(1)
	l.text = make([]byte, 0, 1<<12)
	c.mu.Unlock()
	if n := testing.AllocsPerRun(100, func() { c.Event(&word) }); n != 0 {
		t.Errorf("bot word: %v allocations, want 0", n)
	}

	c = s.Begin(CallStart{CallID: "b"})
	turns := make([][]messages.CallEvent, 200)
	for i := range turns {
		turns[i] = turnEvents(messages.Epoch(i+1), now)
	}
	i := 0
	n := testing.AllocsPerRun(len(turns)-1, func() {
		for j := range turns[i] {
			c.Event(&turns[i][j])
		}
		i++
	})
	if n > 5 {
		t.Errorf("a turn: %v allocations, want at most 5", n)
	}
}
