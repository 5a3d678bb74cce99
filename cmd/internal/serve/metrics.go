package serve

import (
	"net/http"
	"strings"
	"sync"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// latencyBuckets are the voice-to-voice latency histogram's bounds, in
// seconds: dense where a good agent answers (0.5-2 s), then up to 10 s.
var latencyBuckets = []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 4, 5, 7.5, 10}

// metrics are the server's Prometheus metrics, on a registry of its own
// (the process's default registry is left alone). Labels never carry a
// caller's number, words or a tool's arguments: stage, tool and refusal
// names come from fixed sets.
type metrics struct {
	reg      *prometheus.Registry
	wrapped  prometheus.Registerer  // reg, with the agent label
	calls    *prometheus.CounterVec // result: started, start_failed
	refused  *prometheus.CounterVec // reason: full, draining, duplicate
	ended    *prometheus.CounterVec // outcome: ok, error, gave_up; reason: endReasons
	turns    prometheus.Counter
	bargeIns prometheus.Counter
	latency  prometheus.Histogram
	tools    *prometheus.CounterVec // tool
	restarts *prometheus.CounterVec // stage
	failures *prometheus.CounterVec // stage, kind
	gaveUp   *prometheus.CounterVec // stage

	mu        sync.Mutex
	toolNames map[string]bool // the tool label's values so far
}

// maxToolLabels bounds the tool label's values: tools come from the
// agent's registry, but should anything else arrive, the series stay
// bounded (the rest count as "other").
const maxToolLabels = 100

// newMetrics registers the metrics; live reads the number of live calls.
func newMetrics(agent string, live func() int) *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := prometheus.WrapRegistererWith(prometheus.Labels{"agent": agent}, reg)
	m := &metrics{
		reg: reg, wrapped: f, toolNames: map[string]bool{},
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_calls_total", Help: "Calls admitted, by result: started, or start_failed (the agent or the switchboard refused it).",
		}, []string{"result"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_calls_refused_total", Help: "Calls refused before they started, by reason: full, draining, duplicate.",
		}, []string{"reason"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_calls_ended_total", Help: "Calls ended, by outcome: ok, error (ended by a failure), gave_up (a stage failed too often); and by reason: hangup, vanished, stopped_reading, no_input, protocol_error (the caller's side), agent (end_call), server (a hang-up by the server or an operator), stage_failed, other.",
		}, []string{"outcome", "reason"}),
		turns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "brisvox_turns_total", Help: "The callers' turns (utterances taken as a turn).",
		}),
		bargeIns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "brisvox_barge_ins_total", Help: "Answers cut short by the caller speaking over them.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "brisvox_turn_latency_seconds",
			Help:    "Voice-to-voice latency: the end of the caller's speech to the answer's first audio out.",
			Buckets: latencyBuckets,
		}),
		tools: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_tool_calls_total", Help: "Tool calls the model made, by tool name.",
		}, []string{"tool"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_stage_restarts_total", Help: "Restarts of a call's stage (a provider failure or a panic), by stage.",
		}, []string{"stage"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_stage_failures_total",
			Help: "Failures of a call's stage, by stage and kind: a provider error's (rejected, timeout, disconnected, protocol, closed, other) or panic.",
		}, []string{"stage", "kind"}),
		gaveUp: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "brisvox_stage_gave_up_total", Help: "Calls ended because a stage failed too often, by stage.",
		}, []string{"stage"}),
	}
	f.MustRegister(m.calls, m.refused, m.ended, m.turns, m.bargeIns, m.latency, m.tools, m.restarts, m.failures, m.gaveUp,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "brisvox_calls_active", Help: "Calls live now."},
			func() float64 { return float64(live()) }))
	// Zero series for the fixed label sets, so a dashboard sees 0 rather
	// than nothing before the first of each.
	for _, r := range []string{"started", "start_failed"} {
		m.calls.WithLabelValues(r)
	}
	for _, r := range []string{"full", "draining", "duplicate"} {
		m.refused.WithLabelValues(r)
	}
	for _, o := range []string{"ok", "error", "gave_up"} {
		m.ended.WithLabelValues(o, "hangup")
	}
	return m
}

// GaugeFunc adds a gauge read at each scrape (a pool's queue depth, say),
// with the agent label and labels of its own; several of one name must
// carry the same label names.
func (s *Server) GaugeFunc(name, help string, labels map[string]string, read func() float64) error {
	return s.metrics.wrapped.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, read))
}

// CounterFunc adds a counter read at each scrape (read must never go
// down), like GaugeFunc.
func (s *Server) CounterFunc(name, help string, labels map[string]string, read func() float64) error {
	return s.metrics.wrapped.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, read))
}

// Register adds a collector to the server's registry (a transport's
// metrics whose label values come and go, read at each scrape).
func (s *Server) Register(c prometheus.Collector) error { return s.metrics.wrapped.Register(c) }

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// event counts what a call's live event says.
func (m *metrics) event(e messages.CallEvent) {
	switch e.Kind {
	case messages.EventUserTurn:
		m.turns.Inc()
	case messages.EventLatency:
		m.latency.Observe(e.Latency.Seconds())
	case messages.EventBotDone:
		if e.Cut {
			m.bargeIns.Inc()
		}
	case messages.EventTool:
		// One count per call: at its start, not again when it settles.
		if e.Outcome == messages.CallRunning {
			m.tools.WithLabelValues(m.toolLabel(e.Text)).Inc()
		}
	}
}

// toolLabel is name, or "other" once maxToolLabels names were seen.
func (m *metrics) toolLabel(name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.toolNames[name] {
		return name
	}
	if len(m.toolNames) >= maxToolLabels {
		return "other"
	}
	m.toolNames[name] = true
	return name
}

// callEnded counts a call's end and its stages' restarts.
func (m *metrics) callEnded(e messages.CallEnded) {
	reason := endReason(e.Reason)
	switch {
	case e.GaveUp != "":
		m.ended.WithLabelValues("gave_up", reason).Inc()
		m.gaveUp.WithLabelValues(string(e.GaveUp)).Inc()
	case e.Err != nil:
		m.ended.WithLabelValues("error", reason).Inc()
	default:
		m.ended.WithLabelValues("ok", reason).Inc()
	}
	for stage, n := range e.Restarts {
		if n > 0 {
			m.restarts.WithLabelValues(string(stage)).Add(float64(n))
		}
	}
	for stage, kinds := range e.Failures {
		for kind, n := range kinds {
			m.failures.WithLabelValues(string(stage), kind).Add(float64(n))
		}
	}
}

// endReason is a call's end reason as a bounded label value: the
// caller's side (conn.ReasonOf's), the agent's end_call, a hang-up
// by the server or an operator ("hangup: why"), a stage's failure, or
// other. Never the free text of a reason.
func endReason(r string) string {
	switch {
	case r == conn.ReasonHangup:
		return "hangup"
	case r == conn.ReasonVanished:
		return "vanished"
	case r == conn.ReasonStoppedReading:
		return "stopped_reading"
	case r == conn.ReasonSilentInput:
		return "no_input"
	case r == conn.ReasonProtocol:
		return "protocol_error"
	case r == "ended by the agent":
		return "agent"
	case strings.HasPrefix(r, "hangup: "):
		return "server"
	case strings.HasPrefix(r, "stage "):
		return "stage_failed"
	}
	return "other"
}
