package tracing

import (
	"context"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporter counts the exports and logs a failed one itself: the batch
// processor would hand the error to OpenTelemetry's global error handler
// (stderr), outside the node's log.
type exporter struct {
	next sdktrace.SpanExporter
	t    *Tracer
}

var _ sdktrace.SpanExporter = (*exporter)(nil)

func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	s := &e.t.stats
	if err := e.next.ExportSpans(ctx, spans); err != nil {
		s.exportFailures.Add(1)
		s.lostSpans.Add(uint64(len(spans)))
		e.t.cfg.Log.Warn().Err(err).Int("spans", len(spans)).
			Msg("tracing: export to the OTLP endpoint failed, its spans are lost: is the collector up and the endpoint right?")
		return nil
	}
	s.exports.Add(1)
	s.exportedSpans.Add(uint64(len(spans)))
	return nil
}

func (e *exporter) Shutdown(ctx context.Context) error { return e.next.Shutdown(ctx) }
