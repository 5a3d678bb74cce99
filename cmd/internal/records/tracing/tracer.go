package tracing

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names the tracer's scope in the exported spans.
const instrumentation = "github.com/brisvox/brisvox/cmd/internal/records/tracing"

// exportTimeout bounds one POST to the collector (the exporter retries a
// refused or failed batch with backoff within its own limit).
const exportTimeout = 10 * time.Second

// The batch processor's queue of ended spans and its largest export: a
// drain ending 200 calls with their last turns at once (a dozen spans a
// turn) fits; past it the processor drops spans (the exporter is behind).
const (
	spanQueue   = 16384
	exportBatch = 1024
)

// Tracer turns calls into traces for one node. Its goroutine builds the
// spans of every call from the events its calls buffered (see Call.Event)
// and hands them to the SDK's batch processor, which exports them over
// OTLP/HTTP. Close ends what is still open, flushes and stops both.
type Tracer struct {
	cfg       Config
	tp        *sdktrace.TracerProvider
	tracer    trace.Tracer
	transport *http.Transport

	mu sync.Mutex
	// ready are the calls with events (or an end) for the goroutine, each
	// once (Call.scheduled); spare is the slice the goroutine handed back.
	ready, spare []*Call
	live         map[*Call]struct{}
	closed       bool

	wake chan struct{} // one slot: the goroutine has work
	stop chan struct{}
	done chan struct{}

	stats stats
}

// stats are the tracer's counters (Stats).
type stats struct {
	calls, turns, spans       atomic.Uint64
	droppedEvents, lateEvents atomic.Uint64
	exports, exportedSpans    atomic.Uint64
	exportFailures, lostSpans atomic.Uint64
	unfinished                atomic.Uint64
}

// New builds a tracer exporting to cfg.Endpoint and starts its goroutine
// (Close stops it). It does no I/O: the first export connects.
func New(ctx context.Context, cfg Config) (*Tracer, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	endpoint, _ := cfg.exportURL()
	// A transport of our own, so Close can drop its idle connections (the
	// exporter's default transport is shared and keeps them).
	transport := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: transport, Timeout: exportTimeout}
	otlp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(endpoint),
		otlptracehttp.WithHeaders(cfg.Headers),
		otlptracehttp.WithHTTPClient(client),
		// Every OTLP receiver takes gzip; set here, the environment's
		// OTEL_EXPORTER_OTLP_COMPRESSION does not change it.
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", cfg.ServiceName)}
	if cfg.Node != "" {
		attrs = append(attrs, attribute.String("service.instance.id", cfg.Node))
	}
	t := &Tracer{
		cfg:       cfg,
		transport: transport,
		live:      make(map[*Call]struct{}),
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(&exporter{next: otlp, t: t},
			sdktrace.WithMaxQueueSize(spanQueue),
			sdktrace.WithMaxExportBatchSize(exportBatch)),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	)
	t.tracer = t.tp.Tracer(instrumentation)
	go t.run()
	return t, nil
}

// Begin starts the trace of a call: its root span opens at started, so
// the trace id is known at once (Call.TraceID) for the call's record and
// logs. After Close it returns a call that records nothing.
func (t *Tracer) Begin(callID, transport, agent string, started time.Time) *Call {
	ctx, root := t.tracer.Start(context.Background(), "call",
		trace.WithNewRoot(),
		trace.WithTimestamp(started),
		trace.WithAttributes(
			keyCallID.String(callID),
			keyTransport.String(transport),
			keyAgent.String(agent)))
	c := &Call{t: t, root: root, rootCtx: ctx, traceID: root.SpanContext().TraceID().String()}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		root.End()
		return &Call{}
	}
	t.live[c] = struct{}{}
	t.mu.Unlock()
	t.stats.calls.Add(1)
	return c
}

// schedule hands c to the goroutine; it never blocks.
func (t *Tracer) schedule(c *Call) {
	t.mu.Lock()
	if t.closed || c.scheduled {
		t.mu.Unlock()
		return
	}
	c.scheduled = true
	t.ready = append(t.ready, c)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run is the tracer's goroutine: it builds the spans of the calls that
// have something new, until Close.
func (t *Tracer) run() {
	defer close(t.done)
	for {
		select {
		case <-t.wake:
			t.drain()
		case <-t.stop:
			t.drain()
			t.endLive()
			return
		}
	}
}

// drain processes the ready calls until none is left.
func (t *Tracer) drain() {
	for {
		t.mu.Lock()
		batch := t.ready
		t.ready = t.spare[:0]
		t.spare = nil
		for _, c := range batch {
			c.scheduled = false
		}
		t.mu.Unlock()
		if len(batch) == 0 {
			t.mu.Lock()
			t.spare = batch
			t.mu.Unlock()
			return
		}
		for _, c := range batch {
			t.process(c)
		}
		clear(batch)
		t.mu.Lock()
		t.spare = batch[:0]
		t.mu.Unlock()
	}
}

// process builds the spans of what c buffered, and ends its trace once
// the call ended.
func (t *Tracer) process(c *Call) {
	c.mu.Lock()
	items := c.pending
	c.pending, c.spare = c.spare[:0], nil
	end, ended := c.end, c.ended
	c.mu.Unlock()
	for i := range items {
		c.apply(&items[i])
	}
	clear(items)
	c.mu.Lock()
	c.spare = items[:0]
	c.mu.Unlock()
	if ended && !c.finished {
		c.finish(end)
		t.mu.Lock()
		delete(t.live, c)
		t.mu.Unlock()
	}
}

// endLive ends the traces of the calls still live at Close, with what
// they buffered; their root spans say the call had not ended.
func (t *Tracer) endLive() {
	t.mu.Lock()
	live := make([]*Call, 0, len(t.live))
	for c := range t.live {
		live = append(live, c)
	}
	t.live = map[*Call]struct{}{}
	t.mu.Unlock()
	now := time.Now()
	for _, c := range live {
		c.mu.Lock()
		if !c.ended {
			c.ended = true
			c.end = endInfo{at: now, unfinished: true}
		}
		c.mu.Unlock()
		t.process(c)
	}
}

// Close ends the traces of calls still live (marked unfinished), waits
// for the goroutine, and flushes every span to the collector within ctx.
// A second Close does nothing.
func (t *Tracer) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	close(t.stop)
	<-t.done // it never blocks: span building and the batch queue do not wait
	err := t.tp.Shutdown(ctx)
	t.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("tracing: flushing the last spans: %w", err)
	}
	return nil
}

// Stats counts calls, turns and spans built, events dropped (a call's
// buffer full) or late (for a turn already gone), exports and their
// spans, failed exports and the spans they lost, and calls still live at
// Close.
func (t *Tracer) Stats() map[string]uint64 {
	s := &t.stats
	return map[string]uint64{
		"calls":           s.calls.Load(),
		"turns":           s.turns.Load(),
		"spans":           s.spans.Load(),
		"dropped_events":  s.droppedEvents.Load(),
		"late_events":     s.lateEvents.Load(),
		"exports":         s.exports.Load(),
		"exported_spans":  s.exportedSpans.Load(),
		"export_failures": s.exportFailures.Load(),
		"lost_spans":      s.lostSpans.Load(),
		"unfinished":      s.unfinished.Load(),
	}
}
