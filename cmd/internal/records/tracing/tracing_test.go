package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/brisvox/brisvox/messages"
)

// The test's planted content: none of it may reach an exported span.
const (
	plantedSaid   = "my card is 4111 1111 1111 1111 PLANTED-SAID"
	plantedWord   = "PLANTED-WORD"
	plantedArgs   = `{"phone":"+441632960123","note":"PLANTED-ARGS"}`
	plantedResult = "PLANTED-RESULT booking B-77"
	plantedDetail = "PLANTED-DETAIL reference B-77"
	plantedErr    = "PLANTED-ERR the caller said 0207 946 0000"
	plantedToken  = "PLANTED-TOKEN-s3cr3t"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

// ms is t0 plus n milliseconds.
func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// turnMarks is a turn's timeline as the session has it at its first
// audio out.
func turnMarks() map[messages.MarkKind]time.Time {
	return map[messages.MarkKind]time.Time{
		messages.MarkVADStop:       ms(700),
		messages.MarkVADDetected:   ms(750),
		messages.MarkSTTFinal:      ms(800),
		messages.MarkTurnEnd:       ms(1000),
		messages.MarkLLMRequest:    ms(1010),
		messages.MarkLLMFirstToken: ms(1400),
		messages.MarkToolsDone:     ms(1600),
		messages.MarkTTSFirstAudio: ms(1900),
		messages.MarkFirstAudioOut: ms(2000),
	}
}

// scriptedCall is a call's events as the session hands them to OnEvent:
// a tool turn with audio (two rounds, a tool call that worked), a restart
// and a failover, then a turn without audio whose tool call failed.
func scriptedCall() []messages.CallEvent {
	marks := turnMarks()
	return []messages.CallEvent{
		{Kind: messages.EventState, State: messages.StateListening, At: ms(10)},
		{Kind: messages.EventUserSpeaking, At: ms(100)},
		{Kind: messages.EventUserTurn, Epoch: 1, Text: plantedSaid, At: ms(1000)},
		{Kind: messages.EventRound, Epoch: 1, Round: 1, At: ms(1400)},
		{Kind: messages.EventTool, Epoch: 1, Text: "book_table", Call: "call_1", Outcome: messages.CallRunning, At: ms(1450)},
		{Kind: messages.EventTool, Epoch: 1, Text: "book_table", Call: "call_1", Outcome: messages.CallDone, Detail: plantedDetail, At: ms(1600),
			Audit: &messages.ToolAudit{Outcome: "ok", Started: ms(1450), KeyDigest: "ab12", Args: []byte(plantedArgs), Result: plantedResult}},
		{Kind: messages.EventRound, Epoch: 1, Round: 2, At: ms(1800)},
		{Kind: messages.EventLatency, Epoch: 1, Latency: 1300 * time.Millisecond, Stages: messages.TurnStages(marks), Marks: maps.Clone(marks), At: ms(2000)},
		{Kind: messages.EventBotWord, Epoch: 1, Text: plantedWord, At: ms(2000)},
		{Kind: messages.EventUsage, Usage: &messages.ProviderUsage{Kind: messages.UsageLLM, Vendor: "mock", InputTokens: 10}, At: ms(2100)},
		{Kind: messages.EventBotDone, Epoch: 1, Cut: true, At: ms(3000)},
		{Kind: messages.EventRestart, Text: "stt", At: ms(3500)},
		{Kind: messages.EventFailover, Text: "vad", Failover: &messages.Failover{From: "silero", To: "energy"}, At: ms(3600)},
		{Kind: messages.EventUserTurn, Epoch: 2, Text: plantedSaid, At: ms(5000)},
		{Kind: messages.EventRound, Epoch: 2, Round: 1, At: ms(5300)},
		{Kind: messages.EventTool, Epoch: 2, Text: "lookup", Call: "call_2", Outcome: messages.CallFailed, Detail: plantedDetail, At: ms(5600),
			Audit: &messages.ToolAudit{Outcome: "timed_out", Started: ms(5310), Args: []byte(plantedArgs)}},
	}
}

// spanTree indexes a trace's spans.
type spanTree struct {
	byID   map[string]*tracepb.Span
	byName map[string][]*tracepb.Span
}

func treeOf(spans []*tracepb.Span) spanTree {
	tr := spanTree{byID: map[string]*tracepb.Span{}, byName: map[string][]*tracepb.Span{}}
	for _, s := range spans {
		tr.byID[hexID(s.SpanId)] = s
		tr.byName[s.Name] = append(tr.byName[s.Name], s)
	}
	return tr
}

func (tr spanTree) one(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	if n := len(tr.byName[name]); n != 1 {
		t.Fatalf("%d spans named %q, want 1", n, name)
	}
	return tr.byName[name][0]
}

// children are the spans whose parent is p, by name.
func (tr spanTree) children(p *tracepb.Span) map[string][]*tracepb.Span {
	out := map[string][]*tracepb.Span{}
	for _, s := range tr.byID {
		if bytes.Equal(s.ParentSpanId, p.SpanId) {
			out[s.Name] = append(out[s.Name], s)
		}
	}
	return out
}

func newTestTracer(t *testing.T, col *collector, log zerolog.Logger, headers map[string]string) *Tracer {
	t.Helper()
	tr, err := New(context.Background(), Config{Endpoint: col.srv.URL, Headers: headers, Node: "node-a", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func closeTracer(t *testing.T, tr *Tracer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tr.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkTimes checks a span's start and end.
func checkTimes(t *testing.T, s *tracepb.Span, from, to time.Time) {
	t.Helper()
	if got, want := s.StartTimeUnixNano, uint64(from.UnixNano()); got != want {
		t.Errorf("span %q starts %v, want %v", s.Name, time.Unix(0, int64(got)).UTC(), from)
	}
	if got, want := s.EndTimeUnixNano, uint64(to.UnixNano()); got != want {
		t.Errorf("span %q ends %v, want %v", s.Name, time.Unix(0, int64(got)).UTC(), to)
	}
}

func checkAttrs(t *testing.T, s *tracepb.Span, want map[string]string) {
	t.Helper()
	got := attrMap(s.Attributes)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: attribute %s = %q, want %q (all: %v)", s.Name, k, got[k], v, got)
		}
	}
}

// TestScriptedCall: a scripted call's events reach the collector as one
// trace: the call, its turns, their stages, rounds and tool calls, with
// the right parents, names, times and attributes, and nothing of the
// call's content. Close flushes them. Mutation caught: a tool span named
// with its Detail (its summary: "PLANTED-DETAIL reference B-77") fails the
// content check.
func TestScriptedCall(t *testing.T) {
	col := newCollector(t)
	var logs bytes.Buffer
	tr := newTestTracer(t, col, zerolog.New(&logs), map[string]string{"Authorization": "Bearer " + plantedToken})
	c := tr.Begin("call-0001", "sip", "bistro", t0)
	if len(c.TraceID()) != 32 || strings.Trim(c.TraceID(), "0") == "" {
		t.Fatalf("TraceID %q: want 32 hex digits, known at Begin", c.TraceID())
	}
	for _, e := range scriptedCall() {
		c.Event(&e)
	}
	c.End(messages.CallEnded{Call: "call-0001", Reason: "stage llm failed", Err: errors.New(plantedErr), GaveUp: messages.StageLLM,
		Restarts: map[messages.Stage]int{messages.StageSTT: 1}})
	closeTracer(t, tr)

	spans := col.got()
	tree := treeOf(spans)
	for _, s := range spans {
		if hexID(s.TraceId) != c.TraceID() {
			t.Errorf("span %q in trace %x, want the call's %s", s.Name, s.TraceId, c.TraceID())
		}
	}
	if got := col.resource; got["service.name"] != "brisvox" || got["service.instance.id"] != "node-a" {
		t.Errorf("resource %v: want service.name brisvox, service.instance.id node-a", got)
	}
	if len(col.paths) == 0 || col.paths[0] != "/v1/traces" {
		t.Errorf("exports posted to %v, want /v1/traces", col.paths)
	}
	if col.encodings[0] != "gzip" {
		t.Errorf("export's Content-Encoding %q, want gzip", col.encodings[0])
	}
	if got := col.headers[0].Get("Authorization"); got != "Bearer "+plantedToken {
		t.Errorf("the configured header did not reach the collector (got %d bytes)", len(got))
	}

	root := tree.one(t, "call")
	if len(root.ParentSpanId) != 0 {
		t.Errorf("the call span has a parent")
	}
	if root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("call status %v, want an error (a stage gave up)", root.Status)
	}
	checkAttrs(t, root, map[string]string{"brisvox.call.id": "call-0001", "brisvox.transport": "sip", "brisvox.agent": "bistro",
		"brisvox.end_reason": "stage llm failed", "brisvox.gave_up": "llm", "brisvox.turns": "2", "brisvox.restarts": "1"})
	if got := root.StartTimeUnixNano; got != uint64(t0.UnixNano()) {
		t.Errorf("call starts at %d, want Begin's %v", got, t0)
	}
	var evs []string
	for _, ev := range root.Events {
		evs = append(evs, fmt.Sprintf("%s@%d %v", ev.Name, ev.TimeUnixNano, attrMap(ev.Attributes)))
	}
	wantEvs := []string{
		fmt.Sprintf("restart@%d map[brisvox.stage:stt]", ms(3500).UnixNano()),
		fmt.Sprintf("failover@%d map[brisvox.failover.from:silero brisvox.failover.to:energy brisvox.stage:vad]", ms(3600).UnixNano()),
	}
	if strings.Join(evs, "\n") != strings.Join(wantEvs, "\n") {
		t.Errorf("call events:\n%s\nwant:\n%s", strings.Join(evs, "\n"), strings.Join(wantEvs, "\n"))
	}

	turns := tree.children(root)["turn"]
	if len(turns) != 2 || len(tree.byName["turn"]) != 2 {
		t.Fatalf("%d turns under the call (%d in all), want 2", len(turns), len(tree.byName["turn"]))
	}
	byEpoch := map[string]*tracepb.Span{}
	for _, s := range turns {
		byEpoch[attrMap(s.Attributes)["brisvox.epoch"]] = s
	}

	// Turn 1: from the end of speech to the first audio out, its stages
	// tiling it, two rounds and the tool call.
	t1 := byEpoch["1"]
	checkTimes(t, t1, ms(700), ms(2000))
	checkAttrs(t, t1, map[string]string{"brisvox.turn.audio": "true", "brisvox.turn.latency_ms": "1300", "brisvox.turn.cut": "true"})
	kids := tree.children(t1)
	stages := []struct {
		name     string
		from, to int
	}{{"listen", 700, 800}, {"end_of_turn", 800, 1000}, {"think", 1000, 1400}, {"tools", 1400, 1600}, {"voice", 1600, 1900}, {"send", 1900, 2000}}
	for _, st := range stages {
		if len(kids[st.name]) != 1 {
			t.Errorf("turn 1 has %d %q spans, want 1", len(kids[st.name]), st.name)
			continue
		}
		checkTimes(t, kids[st.name][0], ms(st.from), ms(st.to))
	}
	rounds := map[string]*tracepb.Span{}
	for _, s := range kids["llm_round"] {
		rounds[attrMap(s.Attributes)["brisvox.llm.round"]] = s
	}
	if len(rounds) != 2 {
		t.Fatalf("turn 1 has rounds %v, want 1 and 2", rounds)
	}
	checkTimes(t, rounds["1"], ms(1010), ms(1400)) // its request to its first token
	checkTimes(t, rounds["2"], ms(1600), ms(1800)) // the tool's answer to round 2's first token
	if len(kids["tool"]) != 1 {
		t.Fatalf("turn 1 has %d tool spans, want 1", len(kids["tool"]))
	}
	tool1 := kids["tool"][0]
	checkTimes(t, tool1, ms(1450), ms(1600))
	checkAttrs(t, tool1, map[string]string{"gen_ai.tool.name": "book_table", "gen_ai.tool.call.id": "call_1", "brisvox.tool.outcome": "ok"})
	if tool1.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("an ok tool call's span is an error")
	}

	// Turn 2: no audio: from the caller's turn to the tool's settling.
	t2 := byEpoch["2"]
	checkTimes(t, t2, ms(5000), ms(5600))
	checkAttrs(t, t2, map[string]string{"brisvox.turn.audio": "false"})
	kids2 := tree.children(t2)
	if len(kids2["listen"]) != 0 || len(kids2["llm_round"]) != 1 || len(kids2["tool"]) != 1 {
		t.Fatalf("turn 2's children %v: want one round and one tool, no stages", kids2)
	}
	checkTimes(t, kids2["llm_round"][0], ms(5000), ms(5300))
	tool2 := kids2["tool"][0]
	checkTimes(t, tool2, ms(5310), ms(5600))
	checkAttrs(t, tool2, map[string]string{"gen_ai.tool.name": "lookup", "brisvox.tool.outcome": "timed_out"})
	if tool2.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a timed-out tool call's span is not an error")
	}

	if n := len(spans); n != 1+2+6+3+2 {
		t.Errorf("%d spans, want 14 (call, 2 turns, 6 stages, 3 rounds, 2 tools)", n)
	}
	checkNoContent(t, spans, logs.String())
	st := tr.Stats()
	if st["calls"] != 1 || st["turns"] != 2 || st["spans"] != 14 || st["exported_spans"] != 14 || st["dropped_events"] != 0 {
		t.Errorf("stats %v", st)
	}
}

// checkNoContent: the planted transcript, words, arguments, results,
// details, error text and header value are in no span's name, attribute,
// event or status, nor in the log.
func checkNoContent(t *testing.T, spans []*tracepb.Span, log string) {
	t.Helper()
	var all strings.Builder
	for _, s := range spans {
		// The protobuf's text holds every field: names, attributes,
		// events, links, status.
		all.WriteString(s.String())
	}
	all.WriteString(log)
	for _, p := range []string{plantedSaid, "PLANTED", "4111", "+441632960123", "0207 946", "B-77"} {
		if strings.Contains(all.String(), p) {
			t.Errorf("exported spans or the log hold planted content %q", p)
		}
	}
}
