package gate

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/rs/zerolog"
)

// Credentials of the tests: 32 bytes and more, as Validate wants.
const (
	testToken  = "tok-0123456789abcdef0123456789abcdef"
	testSecret = "sec-fedcba9876543210fedcba9876543210"
)

// logSink keeps the gate's log lines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// lines decodes every line written, failing on one that is not JSON.
func (s *logSink) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace([]byte(s.String())), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// rig is a gate in a synctest bubble with a handler that answers 200.
type rig struct {
	t    *testing.T
	g    *Gate
	h    http.Handler
	log  *logSink
	seen int // requests that reached the handler
}

// inBubble runs fn with a gate for cfg in a synctest bubble, closes the
// gate and checks that no goroutine is left.
func inBubble(t *testing.T, cfg Config, fn func(r *rig)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		r := &rig{t: t, log: &logSink{}}
		cfg.Log = zerolog.New(r.log)
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.g = g
		r.h = g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			r.seen++
			w.WriteHeader(http.StatusOK)
		}))
		fn(r)
		g.Close()
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left behind", n)
		}
	})
}

// do sends a request of method to target from remote ("ip:port") with
// the Authorization header auth (none when empty).
func (r *rig) do(method, target, remote, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remote
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w
}

// body decodes a refusal's JSON body.
func body(t *testing.T, w *httptest.ResponseRecorder) (msg, cause string) {
	t.Helper()
	var b struct{ Error, Cause string }
	dec := json.NewDecoder(w.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("refusal body: %v", err)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return b.Error, b.Cause
}

// signed is target path?query signed for secret until exp.
func signed(secret, method, path string, q url.Values, exp time.Time) string {
	return path + "?" + Sign([]byte(secret), method, path, q, exp)
}
