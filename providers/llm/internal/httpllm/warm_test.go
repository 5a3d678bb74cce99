package httpllm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers"
)

// probeAdapter is an Adapter on a server running h whose ProbeBody
// records the request it is given and encodes it as `{"probe":true}`;
// probes counts the ProbeBody calls.
func probeAdapter(t *testing.T, h http.HandlerFunc, probeErr error) (*Adapter, func() []*providers.Request) {
	t.Helper()
	cl, _ := served(t, h)
	var mu sync.Mutex
	var probes []*providers.Request
	a := NewAdapter(AdapterConfig{
		Client: cl.cfg, Name: "test.Adapter",
		BaseURL: "http://" + "host.test/v1", StreamURL: testURL, WarmURL: testURL,
		NilRequest: errors.New("nil request"), InvalidRequest: errors.New("invalid request"),
		Body: func(*providers.Request) ([]byte, error) { return []byte(`{"probe":false}`), nil },
		ProbeBody: func(req *providers.Request) ([]byte, error) {
			mu.Lock()
			probes = append(probes, req)
			mu.Unlock()
			return []byte(`{"probe":true}`), probeErr
		},
		NewStream: func() (providers.LLMStream, *Stream, Decoder) {
			s := &vendorStream{}
			return s, &s.Stream, &s.dec
		},
	})
	t.Cleanup(func() { _ = a.Close() })
	return a, func() []*providers.Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]*providers.Request(nil), probes...)
	}
}

// TestWarmRequest: the probe posts ProbeBody's encoding of one short user
// message and reads the stream to its end; what ends it early is its
// error, and the wait is bounded by the caller's context.
// Mutations seen failing: WarmRequest returning after Open (the cut and
// the stall pass), Body used instead of ProbeBody (the server sees
// "probe":false), the probe request with a system message or two
// messages, ProbeBody's error not wrapped in InvalidRequest.
func TestWarmRequest(t *testing.T) {
	cases := []struct {
		name     string
		h        http.HandlerFunc
		probeErr error
		check    func(error) bool
		at       time.Duration
	}{
		{"read to the end", func(w http.ResponseWriter, r *http.Request) {
			eventStream(w, r, sse("a", "done"), 0, "")
		}, nil, func(err error) bool { return err == nil }, 0},
		{"a stream cut before its end", func(w http.ResponseWriter, r *http.Request) {
			eventStream(w, r, sse("a"), 0, "")
		}, nil, func(err error) bool {
			var d *providers.Disconnected
			return errors.As(err, &d)
		}, 0},
		{"a stream that stalls after its first event", func(w http.ResponseWriter, r *http.Request) {
			eventStream(w, r, sse("a"), time.Hour, sse("done"))
		}, nil, func(err error) bool {
			var to *providers.Timeout
			return errors.As(err, &to) && errors.Is(err, context.DeadlineExceeded)
		}, 500 * time.Millisecond},
		{"refused", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotImplemented)
		}, nil, func(err error) bool {
			var rej *providers.Rejected
			return errors.As(err, &rej) && rej.Status == http.StatusNotImplemented
		}, 0},
		{"a probe the vendor cannot encode", func(w http.ResponseWriter, r *http.Request) {
			t.Error("a request was sent")
		}, errors.New("no"), func(err error) bool { return err != nil && err.Error() == "invalid request: no" }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var bodies []string
				h := func(w http.ResponseWriter, r *http.Request) {
					b, _ := io.ReadAll(r.Body)
					mu.Lock()
					bodies = append(bodies, r.Method+" "+string(b))
					mu.Unlock()
					c.h(w, r)
				}
				a, probes := probeAdapter(t, h, c.probeErr)
				// Below the stream's own 3 s idle bound: the caller's
				// deadline is what ends the stall.
				ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
				defer cancel()
				start := time.Now()
				err := a.WarmRequest(ctx)
				if !c.check(err) || time.Since(start) != c.at {
					t.Fatalf("after %v: %v", time.Since(start), err)
				}
				ps := probes()
				if len(ps) != 1 || len(ps[0].Messages) != 1 || len(ps[0].Tools) != 0 ||
					!reflect.DeepEqual(ps[0].Messages[0], agent.Message{Role: agent.RoleUser, Text: ProbeText}) {
					t.Errorf("probe requests %+v", ps)
				}
				mu.Lock()
				defer mu.Unlock()
				if c.probeErr == nil && (len(bodies) != 1 || bodies[0] != `POST {"probe":true}`) {
					t.Errorf("server saw %q", bodies)
				}
			})
		})
	}
}

// TestWarmProbes: the probes are named by method and path under the
// base URL, without host or query. Mutation seen failing: the query
// kept (gemini's "?alt=sse"), the base not cut (the host shows).
func TestWarmProbes(t *testing.T) {
	cases := []struct {
		name, base, warm, stream string
		wantWarm, wantRequest    string
	}{
		{"openai", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/models", "http://127.0.0.1:8080/v1/chat/completions",
			"GET /models", "POST /chat/completions"},
		{"anthropic", "https://api.anthropic.com", "https://api.anthropic.com/v1/models", "https://api.anthropic.com/v1/messages",
			"GET /v1/models", "POST /v1/messages"},
		{"gemini", "https://g.example", "https://g.example/v1beta/models", "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse",
			"GET /v1beta/models", "POST /v1beta/models/m:streamGenerateContent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := NewAdapter(AdapterConfig{Client: ClientConfig{StreamConfig: testStreamConfig}, BaseURL: c.base, WarmURL: c.warm, StreamURL: c.stream})
			defer a.Close()
			if w, r := a.WarmProbes(); w != c.wantWarm || r != c.wantRequest {
				t.Errorf("probes %q, %q; want %q, %q", w, r, c.wantWarm, c.wantRequest)
			}
		})
	}
}
