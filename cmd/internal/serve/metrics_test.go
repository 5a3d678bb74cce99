package serve

import (
	"errors"
	"fmt"
	"github.com/brisvox/brisvox/media/conn"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestServeMetrics: one call through the server, and one refused at the
// limit, show on /metrics: the call started, its turn, its latency in the
// histogram, the refusal, the live gauge while it runs, and its end.
// Mutations caught: the live events only published, not counted (the
// connection here is a publisher), the refusal not counted, the end not
// counted.
func TestServeMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 1}, &simAgent{responses: []providertest.Response{{Text: "Hi, how can I help?"}}})
		c := newFakeConn("c1", sim.NewScenario("hello").Silence(500*msec).Speak("Hello?", 800*msec).Silence(4*time.Second))
		s.Start(c)
		time.Sleep(3 * time.Second)
		if _, err := s.Admit(); conn.RefusalOf(err).Cause != conn.RefusedFull || !errors.Is(err, conn.ErrRefused) {
			t.Fatalf("Admit at the limit: %v", err)
		}
		code, body := get(t, ln, "/metrics")
		text, _ := body["body"].(string)
		if code != 200 {
			t.Fatalf("/metrics %d", code)
		}
		for _, want := range []string{
			`brisvox_calls_active{agent="test agent"} 1`,
			`brisvox_calls_total{agent="test agent",result="started"} 1`,
			`brisvox_calls_refused_total{agent="test agent",reason="full"} 1`,
			`brisvox_turns_total{agent="test agent"} 1`,
			`brisvox_turn_latency_seconds_count{agent="test agent"} 1`,
			`go_goroutines `,
			`brisvox_actor_workers_max{agent="test agent"} `,
			`brisvox_actor_worker_overflow_total{agent="test agent"} `,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		// The call's tree ran on the dispatcher's workers. (Mutation
		// caught: workerMetrics not called, or reading another system.)
		if !strings.Contains(text, `brisvox_actor_workers{agent="test agent"} `) || strings.Contains(text, `brisvox_actor_workers{agent="test agent"} 0`) {
			t.Errorf("/metrics shows no worker running the call")
		}
		c.HangUp()
		time.Sleep(time.Second)
		if got := testutil.ToFloat64(s.metrics.ended.WithLabelValues("ok", "hangup")); got != 1 {
			t.Errorf("ended ok %v, want 1", got)
		}
		_, body = get(t, ln, "/metrics")
		if text, _ := body["body"].(string); !strings.Contains(text, `brisvox_calls_active{agent="test agent"} 0`) {
			t.Errorf("the live gauge is not 0 after the end")
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}

// TestMetricsOfEventsAndEnds: what each live event and each end adds.
// Mutations caught: a barge-in counted for an answer that played out, the
// restarts or the failures by kind not added, a gave-up end counted as an error, the tool label
// unbounded.
func TestMetricsOfEventsAndEnds(t *testing.T) {
	m := newMetrics("a", func() int { return 0 })
	m.event(messages.CallEvent{Kind: messages.EventBotDone, Cut: false})
	m.event(messages.CallEvent{Kind: messages.EventBotDone, Cut: true})
	m.event(messages.CallEvent{Kind: messages.EventLatency, Latency: 1200 * time.Millisecond})
	if got := testutil.ToFloat64(m.bargeIns); got != 1 {
		t.Errorf("barge-ins %v, want 1", got)
	}
	m.callEnded(messages.CallEnded{Err: errors.New("stt failed"), GaveUp: messages.StageSTT, Restarts: map[messages.Stage]int{messages.StageSTT: 3, messages.StageTTS: 0},
		Failures: map[messages.Stage]map[string]int{messages.StageSTT: {"rejected": 3, "timeout": 1}}})
	m.callEnded(messages.CallEnded{Err: errors.New("the caller's line dropped"), Restarts: map[messages.Stage]int{messages.StageTTS: 1}})
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"gave_up", testutil.ToFloat64(m.ended.WithLabelValues("gave_up", "other")), 1},
		{"error", testutil.ToFloat64(m.ended.WithLabelValues("error", "other")), 1},
		{"gave_up stt", testutil.ToFloat64(m.gaveUp.WithLabelValues(string(messages.StageSTT))), 1},
		{"restarts stt", testutil.ToFloat64(m.restarts.WithLabelValues(string(messages.StageSTT))), 3},
		{"restarts tts", testutil.ToFloat64(m.restarts.WithLabelValues(string(messages.StageTTS))), 1},
		{"failures stt rejected", testutil.ToFloat64(m.failures.WithLabelValues(string(messages.StageSTT), "rejected")), 3},
		{"failures stt timeout", testutil.ToFloat64(m.failures.WithLabelValues(string(messages.StageSTT), "timeout")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	for i := range maxToolLabels + 20 {
		m.event(messages.CallEvent{Kind: messages.EventTool, Text: fmt.Sprintf("tool_%d", i), Outcome: messages.CallRunning})
	}
	m.event(messages.CallEvent{Kind: messages.EventTool, Text: "tool_0", Outcome: messages.CallRunning})
	// A call's settle line is not a second call. Mutation seen failing:
	// every tool event counted -> tool_0 reads 3.
	m.event(messages.CallEvent{Kind: messages.EventTool, Text: "tool_0", Outcome: messages.CallDone})
	if n := testutil.CollectAndCount(m.tools); n != maxToolLabels+1 {
		t.Errorf("%d tool series, want %d and other", n, maxToolLabels)
	}
	if got := testutil.ToFloat64(m.tools.WithLabelValues("other")); got != 20 {
		t.Errorf("other %v, want 20", got)
	}
	if got := testutil.ToFloat64(m.tools.WithLabelValues("tool_0")); got != 2 {
		t.Errorf("tool_0 %v, want 2", got)
	}
}

// TestMetricFuncs: a gauge and a counter read at each scrape, with the
// agent label and their own; a second of one name with other label names
// is refused. Mutation caught: the agent label not added (the series
// reads {rate="8000"} only).
func TestMetricFuncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{}, &simAgent{})
		depth := 3.0
		if err := s.GaugeFunc("brisvox_test_depth", "A depth.", map[string]string{"rate": "8000"}, func() float64 { return depth }); err != nil {
			t.Fatal(err)
		}
		if err := s.CounterFunc("brisvox_test_done_total", "Done.", map[string]string{"rate": "8000"}, func() float64 { return 7 }); err != nil {
			t.Fatal(err)
		}
		if err := s.GaugeFunc("brisvox_test_depth", "A depth.", map[string]string{"other": "x"}, func() float64 { return 0 }); err == nil {
			t.Error("a second brisvox_test_depth with other label names was taken")
		}
		depth = 5
		_, body := get(t, ln, "/metrics")
		text, _ := body["body"].(string)
		for _, want := range []string{`brisvox_test_depth{agent="test agent",rate="8000"} 5`, `brisvox_test_done_total{agent="test agent",rate="8000"} 7`} {
			if !strings.Contains(text, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestEndReasonLabel: the end reason becomes a bounded label; a vanished
// caller is told from one that hung up (SIP counted a vanished call as a
// plain "ok" before). Mutation caught: the free text passed as the label
// (unbounded series), or vanished mapped to hangup.
func TestEndReasonLabel(t *testing.T) {
	for in, want := range map[string]string{
		"hangup": "hangup", "vanished": "vanished", "stopped reading": "stopped_reading",
		"no input": "no_input", "protocol error": "protocol_error", "ended by the agent": "agent",
		"hangup: server shutdown": "server", "stage stt failed": "stage_failed", "stopped": "other",
		"anything a caller could make up": "other",
	} {
		if got := endReason(in); got != want {
			t.Errorf("endReason(%q) = %q, want %q", in, got, want)
		}
	}
}
