package tracing

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an in-process OTLP/HTTP receiver: it decodes each export's
// ExportTraceServiceRequest (protobuf) and keeps its spans.
type collector struct {
	srv *httptest.Server

	mu        sync.Mutex
	spans     []*tracepb.Span
	resource  map[string]string
	paths     []string
	headers   []http.Header
	encodings []string
	status    int // answer with this status instead of 200, when set
}

func newCollector(t testing.TB) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(c.serve)) // 127.0.0.1, port 0
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	var in io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in = zr
	}
	body, err := io.ReadAll(in)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectorpb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.Path)
	c.headers = append(c.headers, r.Header.Clone())
	c.encodings = append(c.encodings, r.Header.Get("Content-Encoding"))
	status := c.status
	if status == 0 {
		for _, rs := range req.ResourceSpans {
			c.resource = attrMap(rs.GetResource().GetAttributes())
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
	}
	c.mu.Unlock()
	if status != 0 {
		http.Error(w, "refused by the test", status)
		return
	}
	out, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) got() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// attrMap flattens attributes to strings (numbers and booleans as the
// protobuf's text of their value).
func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = valueText(kv.Value)
	}
	return m
}

func valueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'f', -1, 64)
	}
	return v.String()
}

func hexID(b []byte) string { return hex.EncodeToString(b) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func sortStrings(s []string) { slices.Sort(s) }
