package tools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
)

// logCapture is a zerolog writer the actors write to from their own
// goroutines.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// traceEvent is one tool trace event as logged.
type traceEvent struct {
	Message    string `json:"message"`
	Level      string `json:"level"`
	CallID     string `json:"call_id"`
	Epoch      uint64 `json:"epoch"`
	Call       string `json:"call"`
	Tool       string `json:"tool"`
	Outcome    string `json:"outcome"`
	DurationUS int64  `json:"duration_us"`
	Retries    int    `json:"retries"`
}

func (e traceEvent) String() string {
	return fmt.Sprintf("%s %s %s(%s) epoch %d retries %d %dus", e.Message, e.Outcome, e.Call, e.Tool, e.Epoch, e.Retries, e.DurationUS)
}

// traceEvents parses the captured log and keeps the tools' trace events,
// in the order they were logged.
func traceEvents(t *testing.T, log string) []traceEvent {
	t.Helper()
	var out []traceEvent
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var e traceEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if e.Message == "tool call settled" || e.Message == "late_result" {
			out = append(out, e)
		}
	}
	return out
}

// timedTool takes d, or fails with its context; with a timeout.
func timedTool(name string, effect agent.Effect, timeout, d time.Duration, content string) agent.Tool {
	return agent.NewFuncTool(agent.Spec{Name: name, Effect: effect, Timeout: timeout},
		func(ctx context.Context, _ json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
			select {
			case <-time.After(d):
				return agent.Output{Content: content}, nil
			case <-ctx.Done():
				return agent.Output{}, ctx.Err()
			}
		})
}

// tracedCall is call with the log captured at debug level.
func tracedCall(t *testing.T, s *sim.Scenario, barges int, reg *agent.Registry, responses ...providertest.Response) (*sim.Result, string) {
	t.Helper()
	var capture logCapture
	c := call(t, s, reg, responses...)
	c.Log = zerolog.New(&capture).Level(zerolog.DebugLevel)
	r, err := c.Run()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.CheckInvariants(r, barges); err != nil {
		t.Fatal(err)
	}
	return r, capture.String()
}

// TestTraceEvents: every call the tools actor answers emits exactly one
// "tool call settled" event, and a SideEffect call whose slot was answered
// at its timeout a "late_result" when it finishes, with the session, epoch,
// call id, tool, outcome, retries and the virtual time since admission.
//
// Mutations seen failing (each seen, then reverted):
//   - done() not tracing a late result: the SideEffect case misses its
//     late_result;
//   - slotTimeout filling the slot without answer(): no timed_out_running
//     event;
//   - retries read after the round's own malformed call was counted: the
//     malformed round's calls trace retries 1;
//   - the specific kinds traced as "malformed" (the old outcome string);
//   - duration_us in whole milliseconds times 1000 (1000 for the 1.5 ms
//     call);
//   - the admission events traced both by answer() and traceAdmitted():
//     two events for each malformed call;
//   - the late_result event carrying the result's content as its outcome;
//   - the tool name cut at 64 bytes without minding runes (invalid UTF-8,
//     which the log turns into U+FFFD), or not cut at all;
//   - interrupt() forgetting its rounds without traceCut: the barge-in case
//     has no interrupted / interrupted_running events.
func TestTraceEvents(t *testing.T) {
	booking := agent.NewSpec("book_people", "Books.", agent.SideEffect)
	booking.Parameters = json.RawMessage(`{"type":"object","properties":{"people":{"type":"integer"}},"required":["people"]}`)
	schemaTool := agent.NewFuncTool(booking, func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
		return agent.Output{Content: "never"}, nil
	})
	// An invented name of 70 bytes with a 2-byte rune across byte 64.
	longName := strings.Repeat("x", 63) + "é" + "yyyyy"
	settled := func(call, tool, outcome string, retries int, d time.Duration) traceEvent {
		return traceEvent{Message: "tool call settled", Level: "debug", Epoch: 1, Call: call, Tool: tool, Outcome: outcome, Retries: retries, DurationUS: d.Microseconds()}
	}
	tests := []struct {
		name  string
		tools []agent.Tool
		// barge, when set, is the caller's second utterance, at 3 s (the
		// round asks at about 2.3 s).
		barge     bool
		responses []providertest.Response
		want      []traceEvent
	}{
		{
			name:  "readonly ok",
			tools: []agent.Tool{timedTool("lookup", agent.ReadOnly, 10*time.Second, 1500*time.Microsecond, "found")},
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{{ID: "a", Name: "lookup", Args: `{}`}}},
				{Text: "Found it."},
			},
			want: []traceEvent{settled("t1.0", "lookup", "ok", 0, 1500*time.Microsecond)},
		},
		{
			name:  "side effect timed out then finishing",
			tools: []agent.Tool{timedTool("book", agent.SideEffect, time.Second, 3*time.Second, "booked")},
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{}`}}},
				{Text: "It is still going."},
				{Text: "It is booked."},
			},
			want: []traceEvent{
				settled("t1.0", "book", "timed_out_running", 0, time.Second),
				{Message: "late_result", Level: "debug", Epoch: 1, Call: "t1.0", Tool: "book", Outcome: "ok", DurationUS: (3 * time.Second).Microseconds()},
			},
		},
		{
			name: "barge-in while running",
			tools: []agent.Tool{
				timedTool("lookup", agent.ReadOnly, 10*time.Second, 2*time.Second, "found"),
				timedTool("book", agent.SideEffect, 10*time.Second, 2*time.Second, "booked"),
			},
			barge: true,
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{{ID: "a", Name: "lookup", Args: `{}`}, {ID: "b", Name: "book", Args: `{}`}}},
				{Text: "Okay, I stopped."},
			},
			// The barge-in cuts the round 670 ms after admission (when the
			// turn detects it); the booking goes on and ends at 2 s.
			want: []traceEvent{
				settled("t1.0", "lookup", "interrupted", 0, 670*time.Millisecond),
				settled("t1.1", "book", "interrupted_running", 0, 670*time.Millisecond),
				{Message: "late_result", Level: "debug", Epoch: 1, Call: "t1.1", Tool: "book", Outcome: "ok", DurationUS: (2 * time.Second).Microseconds()},
			},
		},
		{
			name:  "malformed calls",
			tools: []agent.Tool{timedTool("lookup", agent.ReadOnly, 10*time.Second, 100*time.Millisecond, "found"), schemaTool},
			responses: []providertest.Response{
				{Calls: []providertest.ScriptedCall{
					{ID: "a", Name: "nope", Args: `{}`},
					{ID: "b", Name: "book_people", Args: `{"people":"two"}`},
					{ID: "c", Name: "lookup", Args: `{}`},
					{ID: "d", Name: longName, Args: `{}`},
				}},
				{Calls: []providertest.ScriptedCall{{ID: "e", Name: "lookup", Args: `{}`}}},
				{Text: "Found it."},
			},
			want: []traceEvent{
				settled("t1.0", "nope", "unknown_tool", 0, 0),
				settled("t1.1", "book_people", "invalid_arguments", 0, 0),
				settled("t1.3", longName[:63], "unknown_tool", 0, 0), // cut before the 2-byte rune at 63
				settled("t1.2", "lookup", "ok", 0, 100*time.Millisecond),
				settled("t1.4", "lookup", "ok", 1, 100*time.Millisecond),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg, err := agent.NewRegistry(tt.tools...)
				if err != nil {
					t.Fatal(err)
				}
				name := "trace-" + strings.ReplaceAll(tt.name, " ", "-")
				s := sim.NewScenario(name).Silence(500*time.Millisecond).Speak("Please do it.", time.Second)
				barges := 0
				if tt.barge {
					s, barges = s.Silence(1500*time.Millisecond).Speak("Wait, stop.", 800*time.Millisecond), 1
				}
				s = s.Silence(6 * time.Second)
				_, log := tracedCall(t, s, barges, reg, tt.responses...)
				got := traceEvents(t, log)
				for i := range tt.want {
					tt.want[i].CallID = "sim-" + name
				}
				if len(got) != len(tt.want) {
					t.Fatalf("%d events %v, want %d %v", len(got), got, len(tt.want), tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d: %+v, want %+v", i, got[i], tt.want[i])
					}
				}
			})
		})
	}
}

// TestTraceCarriesNoArgumentsOrResults: argument values and result
// contents never reach the log, whatever path the call takes: a ReadOnly
// result, a SideEffect result in its slot and as a late note, a schema
// failure whose reason quotes the value, an unknown tool. (Mutations seen
// failing, each then reverted: answer() logging the result's content;
// traceAdmitted logging the call's arguments; the late_result event
// carrying the result's content as its outcome.)
func TestTraceCarriesNoArgumentsOrResults(t *testing.T) {
	const argMark, resultMark = "SECRET-4711", "RESULT-0815"
	synctest.Test(t, func(t *testing.T) {
		spec := agent.NewSpec("digits", "Picks.", agent.ReadOnly)
		spec.Parameters = json.RawMessage(`{"type":"object","properties":{"pick":{"type":"string","pattern":"^[0-9]+$"}}}`)
		patternTool := agent.NewFuncTool(spec, func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
			return agent.Output{Content: resultMark}, nil
		})
		reg, err := agent.NewRegistry(
			timedTool("lookup", agent.ReadOnly, 10*time.Second, 100*time.Millisecond, "lookup "+resultMark),
			timedTool("book", agent.SideEffect, 5*time.Second, 200*time.Millisecond, "book "+resultMark),
			timedTool("slow_book", agent.SideEffect, time.Second, 2*time.Second, "slow "+resultMark),
			patternTool,
		)
		if err != nil {
			t.Fatal(err)
		}
		args := `{"note":"` + argMark + `"}`
		s := sim.NewScenario("privacy").Silence(500*time.Millisecond).Speak("Do it all.", time.Second).Silence(6 * time.Second)
		r, log := tracedCall(t, s, 0, reg,
			providertest.Response{Calls: []providertest.ScriptedCall{
				{ID: "a", Name: "lookup", Args: args},
				{ID: "b", Name: "book", Args: args},
				{ID: "c", Name: "slow_book", Args: args},
				{ID: "d", Name: "digits", Args: `{"pick":"` + argMark + `"}`},
				{ID: "e", Name: "nope", Args: args},
			}},
			providertest.Response{Text: "Working on it."},
			providertest.Response{Text: "Done."})
		// The results reached the model, and the schema failure's reason
		// quotes the argument: both were there to leak.
		if fp := r.Context.Fingerprint(); !strings.Contains(fp, resultMark) || !strings.Contains(resultOf(r.Context, "t1.3"), "'"+argMark+"'") {
			t.Fatalf("the markers did not reach the context: %s", fp)
		}
		if n := len(traceEvents(t, log)); n != 6 { // five settled, one late
			t.Fatalf("%d trace events, want 6:\n%s", n, log)
		}
		for _, mark := range []string{argMark, resultMark} {
			if strings.Contains(log, mark) {
				t.Errorf("%s in the log:\n%s", mark, log)
			}
		}
	})
}
