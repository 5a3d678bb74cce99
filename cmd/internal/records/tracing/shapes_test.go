package tracing

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/brisvox/brisvox/messages"
)

// runCall sends evs through a call of a fresh tracer, ends it (unless
// noEnd) and closes the tracer; it returns the collected spans.
func runCall(t *testing.T, evs []messages.CallEvent, noEnd bool) ([]*tracepb.Span, *Tracer) {
	t.Helper()
	col := newCollector(t)
	tr := newTestTracer(t, col, zerolog.Nop(), nil)
	c := tr.Begin("call-x", "pcm", "a", t0)
	for i := range evs {
		c.Event(&evs[i])
	}
	if !noEnd {
		c.End(messages.CallEnded{Reason: "hangup"})
	}
	closeTracer(t, tr)
	return col.got(), tr
}

func latency(e messages.Epoch, shift time.Duration) messages.CallEvent {
	marks := turnMarks()
	for k, v := range marks {
		marks[k] = v.Add(shift)
	}
	return messages.CallEvent{Kind: messages.EventLatency, Epoch: e, Stages: messages.TurnStages(marks), Marks: maps.Clone(marks), At: marks[messages.MarkFirstAudioOut]}
}

// shape is a trace's spans as "name(parent name) from-to" in ms from t0,
// sorted, without the stages (TestScriptedCall checks those).
func shape(spans []*tracepb.Span) string {
	tree := treeOf(spans)
	var out []string
	for _, s := range spans {
		switch s.Name {
		case "listen", "end_of_turn", "think", "tools", "voice", "send":
			continue
		}
		parent := "-"
		if p, ok := tree.byID[hexID(s.ParentSpanId)]; ok {
			parent = p.Name
			if e := attrMap(p.Attributes)["brisvox.epoch"]; e != "" {
				parent += e
			}
		}
		name := s.Name
		if e := attrMap(s.Attributes)["brisvox.epoch"]; e != "" {
			name += e
		}
		from := (int64(s.StartTimeUnixNano) - t0.UnixNano()) / 1e6
		to := (int64(s.EndTimeUnixNano) - t0.UnixNano()) / 1e6
		if s.Name == "call" {
			from, to = 0, 0 // ends at End's wall clock
		}
		out = append(out, name+"("+parent+") "+itoa(from)+"-"+itoa(to))
	}
	sortStrings(out)
	return strings.Join(out, "\n")
}

// TestTurnShapes: turns in the orders the session's events can come in
// make the same spans: first audio out before or after the answer's
// end, a turn without audio built when the next turn begins or the call
// ends, a tool call settling after its turn was built, events of no turn.
func TestTurnShapes(t *testing.T) {
	sec := time.Second
	cases := []struct {
		name  string
		evs   []messages.CallEvent
		noEnd bool
		want  []string
	}{
		{
			// Mutation caught: building a turn at its EventBotDone without
			// waiting for its marks makes turn1 a no-audio span 1000-3000.
			name: "the answer's end before its first audio out",
			evs: []messages.CallEvent{
				{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)},
				{Kind: messages.EventBotDone, Epoch: 1, At: ms(3000)},
				latency(1, 0),
			},
			want: []string{"call(-) 0-0", "turn1(call) 700-2000"},
		},
		{
			name: "a turn without audio, built when the next begins",
			evs: []messages.CallEvent{
				{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)},
				{Kind: messages.EventRound, Epoch: 1, Round: 1, At: ms(1300)},
				{Kind: messages.EventBotDone, Epoch: 1, Cut: true, At: ms(1350)},
				{Kind: messages.EventUserTurn, Epoch: 2, At: ms(6000)},
				latency(2, 5*sec),
				{Kind: messages.EventBotDone, Epoch: 2, At: ms(8000)},
			},
			want: []string{"call(-) 0-0", "llm_round(turn1) 1000-1300", "turn1(call) 1000-1350", "turn2(call) 5700-7000"},
		},
		{
			// Mutation caught: a late tool call put under the call instead
			// of its turn (or dropped) changes tool(turn1).
			name: "a tool call settling after its turn was built",
			evs: []messages.CallEvent{
				{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)},
				{Kind: messages.EventRound, Epoch: 1, Round: 1, At: ms(1400)},
				latency(1, 0),
				{Kind: messages.EventBotDone, Epoch: 1, At: ms(3000)},
				{Kind: messages.EventTool, Epoch: 1, Text: "slow", Call: "c1", At: ms(4000), Audit: &messages.ToolAudit{Outcome: "ok", Started: ms(1500)}},
				{Kind: messages.EventRound, Epoch: 1, Round: 2, At: ms(4200)},
			},
			want: []string{"call(-) 0-0", "llm_round(turn1) 1010-1400", "llm_round(turn1) 4000-4200", "tool(turn1) 1500-4000", "turn1(call) 700-2000"},
		},
		{
			name: "a turn still open when the call ends",
			evs: []messages.CallEvent{
				{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)},
				latency(1, 0),
			},
			want: []string{"call(-) 0-0", "turn1(call) 700-2000"},
		},
		{
			name: "a turn still open when the tracer closes",
			evs: []messages.CallEvent{
				{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)},
				{Kind: messages.EventTool, Epoch: 1, Text: "t", Call: "c1", At: ms(1200), Audit: &messages.ToolAudit{Outcome: "failed", Started: ms(1100)}},
			},
			noEnd: true,
			want:  []string{"call(-) 0-0", "tool(turn1) 1100-1200", "turn1(call) 1000-1200"},
		},
		{
			name: "a greeting (no caller's turn, no round, no tool) makes no turn span",
			evs: []messages.CallEvent{
				{Kind: messages.EventBotDone, Epoch: 1, At: ms(3000)},
				{Kind: messages.EventUserTurn, Epoch: 2, At: ms(6000)},
			},
			want: []string{"call(-) 0-0", "turn2(call) 6000-6000"},
		},
		{
			name: "running tool lines, words, usage and states make nothing",
			evs: []messages.CallEvent{
				{Kind: messages.EventTool, Epoch: 1, Text: "t", Call: "c1", Outcome: messages.CallRunning, At: ms(1000)},
				{Kind: messages.EventBotWord, Epoch: 1, Text: plantedWord, At: ms(1000)},
				{Kind: messages.EventUsage, At: ms(1000)},
				{Kind: messages.EventState, Epoch: 1, State: messages.StateSpeaking, At: ms(1000)},
				{Kind: messages.EventFailover, Text: "vad", At: ms(1000)}, // no Failover: not a switch
			},
			want: []string{"call(-) 0-0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spans, _ := runCall(t, tc.evs, tc.noEnd)
			want := append([]string(nil), tc.want...)
			sortStrings(want)
			if got := shape(spans); got != strings.Join(want, "\n") {
				t.Errorf("spans:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			if tc.noEnd {
				root := treeOf(spans).one(t, "call")
				if a := attrMap(root.Attributes); a["brisvox.unfinished"] != "true" || a["brisvox.end_reason"] != "" {
					t.Errorf("a call live at Close: attributes %v, want brisvox.unfinished and no end reason", a)
				}
			}
		})
	}
}

// TestAfterEndAndClose: events after End change nothing; Begin after
// Close gives a call that records nothing; a second Close does nothing.
func TestAfterEndAndClose(t *testing.T) {
	col := newCollector(t)
	tr := newTestTracer(t, col, zerolog.Nop(), nil)
	c := tr.Begin("call-x", "pcm", "a", t0)
	c.End(messages.CallEnded{Reason: "hangup"})
	c.Event(&messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)})
	c.End(messages.CallEnded{Reason: "again"})
	closeTracer(t, tr)
	after := tr.Begin("call-y", "pcm", "a", t0)
	if after.TraceID() != "" {
		t.Errorf("a call begun after Close has trace id %q", after.TraceID())
	}
	after.Event(&messages.CallEvent{Kind: messages.EventUserTurn, Epoch: 1, At: ms(1000)})
	after.End(messages.CallEnded{Reason: "hangup"})
	if err := tr.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	spans := col.got()
	if len(spans) != 1 || attrMap(spans[0].Attributes)["brisvox.end_reason"] != "hangup" {
		t.Errorf("spans %v: want the one call, ended by hangup", spans)
	}
}

// TestExportFailure: a collector refusing the export is counted and
// logged (the error as a field), the configured header's value is in no
// log line, Close still returns. Mutation caught: handing the export's
// error back to the batch processor (it goes to OpenTelemetry's global
// handler, on stderr: no count, no line in the node's log).
func TestExportFailure(t *testing.T) {
	col := newCollector(t)
	col.status = 400 // not retried by the exporter
	var logs bytes.Buffer
	tr := newTestTracer(t, col, zerolog.New(&logs), map[string]string{"X-Api-Key": plantedToken})
	c := tr.Begin("call-x", "pcm", "a", t0)
	c.End(messages.CallEnded{Reason: "hangup"})
	closeTracer(t, tr)
	st := tr.Stats()
	if st["export_failures"] != 1 || st["lost_spans"] != 1 || st["exported_spans"] != 0 {
		t.Errorf("stats %v: want 1 export failure, 1 lost span", st)
	}
	if !strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), `"error":`) {
		t.Errorf("log %q: want a warning with the error", logs.String())
	}
	if strings.Contains(logs.String(), plantedToken) {
		t.Errorf("the log holds the header's value")
	}
}

// TestDroppedEvents: a call whose buffer is full (the tracer's goroutine
// far behind) drops and counts; what it kept still makes spans. Mutation
// caught: a looser bound (maxPending*4) drops nothing.
func TestDroppedEvents(t *testing.T) {
	col := newCollector(t)
	tr := newTestTracer(t, col, zerolog.Nop(), nil)
	c := tr.Begin("call-x", "pcm", "a", t0)
	hold(c, true)
	for i := range maxPending + 10 {
		c.Event(&messages.CallEvent{Kind: messages.EventUserTurn, Epoch: messages.Epoch(i + 1), At: ms(1000 + i)})
	}
	hold(c, false)
	c.End(messages.CallEnded{Reason: "hangup"})
	closeTracer(t, tr)
	if st := tr.Stats(); st["dropped_events"] != 10 || st["turns"] != maxPending {
		t.Errorf("stats %v: want 10 dropped events, %d turns", st, maxPending)
	}
}

// TestEventAllocs: on a warm call, a turn's events cost the session's
// goroutine no allocation. Mutation caught: keeping the event's Marks map
// by a copy made with maps.Clone (or any per-event allocation).
func TestEventAllocs(t *testing.T) {
	col := newCollector(t)
	tr := newTestTracer(t, col, zerolog.Nop(), nil)
	c := tr.Begin("call-x", "pcm", "a", t0)
	hold(c, true)
	evs := turnEvents(1)
	turn := func() {
		for j := range evs {
			c.Event(&evs[j])
		}
		takeBuffer(c)
	}
	turn()
	turn()
	if n := testing.AllocsPerRun(100, turn); n != 0 {
		t.Errorf("%v allocations per turn on the session's goroutine, want 0", n)
	}
	hold(c, false)
	c.End(messages.CallEnded{Reason: "hangup"})
	closeTracer(t, tr)
}
