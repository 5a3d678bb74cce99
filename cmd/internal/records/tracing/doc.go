// Package tracing exports every call as an OpenTelemetry trace over
// OTLP/HTTP: the call is the root span "call", each turn a "turn" span
// with its stages (listen, end_of_turn, think, tools, voice, send) as
// child spans, each LLM round an "llm_round" span and each settled tool
// call a "tool" span with its contract outcome; restarts and failovers are
// events on the call's span. Spans carry times, names and outcomes, never
// content: no transcript, no words, no tool arguments or results.
//
// The session's goroutine only copies a call's events into the call's own
// buffer (Call.Event: a short lock, no allocation once warm); the spans are
// built from their explicit timestamps by the tracer's one goroutine, and
// the SDK's batch processor exports them, gzip-compressed. The endpoint,
// headers and compression are the Config's alone (OpenTelemetry's
// OTEL_EXPORTER_OTLP_* variables do not change them), and export errors
// go to the node's log, not OpenTelemetry's global handler. Tracing is
// off unless an endpoint is configured: the caller builds a Tracer only
// then.
package tracing
