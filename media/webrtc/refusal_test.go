package webrtc

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/logtest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// serve runs one request through h with a recorder (no socket).
func serve(h http.Handler, method, path, origin, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// decodeBody decodes a JSON object answer.
func decodeBody(t *testing.T, rec *httptest.ResponseRecorder) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("answer %d is not a json object of strings: %q", rec.Code, rec.Body.String())
	}
	return m
}

// TestRefusals: every refusal answers 503 with Retry-After (whole seconds,
// rounded up) and {"error", "cause"}, is counted by cause, and is written
// to the log only as the tally's summary, however many come.
// Mutations caught: Retry-After not set, the cause left out of the body
// or a refusal's cause replaced by "full", a closed server answering
// without the draining cause, a log line per refusal (the count of lines
// grows with the refusals: 50 instead of at most 3).
func TestRefusals(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		closed bool
		cause  string
		retry  string
	}{
		{"full", &conn.Refusal{Cause: conn.RefusedFull, Detail: "20 calls", RetryAfter: 3 * time.Second}, false, "full", "3"},
		{"draining", &conn.Refusal{Cause: conn.RefusedDraining, RetryAfter: 1500 * time.Millisecond}, false, "draining", "2"},
		{"resource", &conn.Refusal{Cause: conn.RefusedResource, Detail: "decoders", RetryAfter: time.Second}, false, "resource", "1"},
		{"rate limited", &conn.Refusal{Cause: conn.RefusedRateLimited, RetryAfter: 10 * time.Second}, false, "rate_limited", "10"},
		{"overloaded", &conn.Refusal{Cause: conn.RefusedOverloaded, Detail: "load", RetryAfter: 2 * time.Second}, false, "overloaded", "2"},
		{"untyped error", errors.New("no"), false, "full", "1"},
		{"wrapped refusal", errors.Join(errors.New("ctx"), &conn.Refusal{Cause: conn.RefusedResource, RetryAfter: time.Second}), false, "resource", "1"},
		{"closed server", nil, true, "draining", "5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := newLogSink()
				cfg := testConfig()
				cfg.Logger = zerolog.New(logs)
				cfg.OnCall = func(c *Call) { t.Error("a refused offer became a call") }
				cfg.Admit = func() (conn.Admission, error) { return nil, tc.err }
				srv, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if tc.closed {
					srv.Close()
				}
				const n = 50
				for range n {
					rec := serve(srv.Handler(), http.MethodPost, "/offer", "", `{"type":"offer","sdp":"v=0"}`)
					if rec.Code != http.StatusServiceUnavailable {
						t.Fatalf("status %d, want 503", rec.Code)
					}
					if got := rec.Header().Get("Retry-After"); got != tc.retry {
						t.Fatalf("Retry-After %q, want %q", got, tc.retry)
					}
					m := decodeBody(t, rec)
					if m["cause"] != tc.cause || m["error"] == "" || len(m) != 2 {
						t.Fatalf("body %v, want {error, cause: %s}", m, tc.cause)
					}
				}
				st := srv.Stats()
				if st["offers_refused"] != n || st["offers_refused_"+tc.cause] != n {
					t.Fatalf("counters %v, want %d refused as %s", st, n, tc.cause)
				}
				synctest.Wait()
				time.Sleep(3 * time.Second)
				srv.Close()
				if err := logtest.Check(logs.Bytes(), nil); err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
				if tc.closed {
					// Closed first: the tally counts nothing after Close.
					if logs.String() != "" {
						t.Fatalf("a closed server logged its refusals: %s", logs.String())
					}
					return
				}
				if len(lines) > 3 {
					t.Fatalf("%d log lines for %d refusals, want the tally's few: %s", len(lines), n, logs.String())
				}
				var sum uint64
				for _, l := range lines {
					var line struct {
						Counts  map[string]uint64 `json:"counts"`
						Message string            `json:"message"`
					}
					if err := json.Unmarshal([]byte(l), &line); err != nil || line.Message != "webrtc offers refused" {
						t.Fatalf("unexpected line %s", l)
					}
					sum += line.Counts[tc.cause]
				}
				if sum != n {
					t.Fatalf("the tally counted %d refusals, want %d: %s", sum, n, logs.String())
				}
			})
		})
	}
}

// countingAdmitter is a reservation with a limit, with the contract of
// serve's Admit: a slot is reserved at once, then either released (no
// call came of it) or started (the call runs) and later ended.
type countingAdmitter struct {
	limit int
	retry time.Duration

	mu                     sync.Mutex
	reserved, live, peak   int
	admitted, refused, rel int
}

type testSlot struct {
	a     *countingAdmitter
	state int // 0 reserved, 1 started, 2 released
}

func (a *countingAdmitter) Admit() (conn.Admission, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved+a.live >= a.limit {
		a.refused++
		return nil, &conn.Refusal{Cause: conn.RefusedFull, RetryAfter: a.retry}
	}
	a.reserved++
	a.admitted++
	a.peak = max(a.peak, a.reserved+a.live)
	return &testSlot{a: a}, nil
}

func (s *testSlot) Release() {
	s.a.mu.Lock()
	defer s.a.mu.Unlock()
	if s.state == 0 {
		s.state = 2
		s.a.reserved--
		s.a.rel++
	}
}

// start moves a reserved slot to live (as serve.Start does); false for a
// slot that was not reserved.
func (a *countingAdmitter) start(adm conn.Admission) bool {
	s, ok := adm.(*testSlot)
	if !ok {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.state != 0 {
		return false
	}
	s.state = 1
	a.reserved--
	a.live++
	return true
}

func (a *countingAdmitter) end() {
	a.mu.Lock()
	a.live--
	a.mu.Unlock()
}

func (a *countingAdmitter) counts() (reserved, live, peak int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reserved, a.live, a.peak
}

var _ conn.Admission = (*testSlot)(nil)

// TestAllowedOrigins: a page of a listed origin gets its preflight
// answered and its offer's answer readable (Access-Control-Allow-Origin
// echoing it, Vary: Origin); the server's own host and clients without an
// Origin pass; any other origin gets 403 naming the setting, before a
// slot is reserved, on /offer, its preflight and the websocket.
// Mutations caught: the origin check skipped on /offer or /ws (503 or 404
// instead of 403), a listed origin not echoed (the page cannot read the
// answer), default ports not normalized (a listed "https://app.example:443"
// refused), the check after Admit (a refused origin holds a slot),
// Retry-After not exposed to a listed page.
func TestAllowedOrigins(t *testing.T) {
	cases := []struct {
		name, method, path, origin string
		status                     int
		allow                      string
	}{
		{"preflight listed", http.MethodOptions, "/offer", "https://app.example", 204, "https://app.example"},
		{"preflight listed with port", http.MethodOptions, "/offer", "http://localhost:8080", 204, "http://localhost:8080"},
		{"preflight upper case", http.MethodOptions, "/offer", "HTTPS://APP.EXAMPLE", 204, "https://app.example"},
		{"preflight unlisted", http.MethodOptions, "/offer", "https://evil.example", 403, ""},
		{"preflight other scheme", http.MethodOptions, "/offer", "http://app.example", 403, ""},
		{"preflight other port", http.MethodOptions, "/offer", "http://localhost:8081", 403, ""},
		{"preflight null origin", http.MethodOptions, "/offer", "null", 403, ""},
		{"offer listed", http.MethodPost, "/offer", "https://app.example", 503, "https://app.example"},
		{"offer same host", http.MethodPost, "/offer", "https://example.com", 503, ""},
		{"offer without origin", http.MethodPost, "/offer", "", 503, ""},
		{"offer unlisted", http.MethodPost, "/offer", "https://evil.example", 403, ""},
		{"offer bad origin", http.MethodPost, "/offer", "://", 403, ""},
		{"websocket unlisted", http.MethodGet, "/ws?call=x", "https://evil.example", 403, ""},
		{"websocket listed", http.MethodGet, "/ws?call=x", "https://app.example", 404, ""},
	}
	admits := 0
	cfg := testConfig()
	cfg.AllowedOrigins = []string{"https://app.example:443", "http://localhost:8080"}
	cfg.OnCall = func(*Call) {}
	cfg.Admit = func() (conn.Admission, error) {
		admits++
		return nil, &conn.Refusal{Cause: conn.RefusedFull, RetryAfter: time.Second}
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := admits
			rec := serve(srv.Handler(), tc.method, tc.path, tc.origin, `{}`)
			if rec.Code != tc.status {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body.String(), tc.status)
			}
			if got := rec.Header().Get("Access-Control-Allow-Origin"); got != tc.allow {
				t.Fatalf("Access-Control-Allow-Origin %q, want %q", got, tc.allow)
			}
			if tc.method == http.MethodPost && tc.allow != "" && rec.Header().Get("Access-Control-Expose-Headers") != "Retry-After" {
				t.Fatal("a listed page cannot read the refusal's Retry-After")
			}
			if tc.path == "/offer" && rec.Header().Get("Vary") != "Origin" {
				t.Fatalf("Vary %q, want Origin", rec.Header().Get("Vary"))
			}
			if tc.status == 403 {
				if m := decodeBody(t, rec); !strings.Contains(m["error"], "AllowedOrigins") {
					t.Fatalf("403 body %v does not name the setting", m)
				}
				if admits != before {
					t.Fatal("a refused origin was admitted first")
				}
			}
			if tc.status == 204 {
				h := rec.Header()
				if h.Get("Access-Control-Allow-Methods") != "POST" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
					t.Fatalf("preflight headers %v", h)
				}
			}
		})
	}
	if n := srv.Stats()["origin_refused"]; n != 7 {
		t.Fatalf("origin_refused %d, want 7", n)
	}
}

// TestAllowedOriginsValidate: only plain origins are accepted.
// Mutation caught: Validate not checking AllowedOrigins (a pattern or a
// URL with a path would never match and fail silently).
func TestAllowedOriginsValidate(t *testing.T) {
	cases := []struct {
		origin string
		ok     bool
	}{
		{"https://app.example", true},
		{"https://app.example:8443", true},
		{"http://127.0.0.1:8080", true},
		{"https://app.example/", true},
		{"https://app.example/page", false},
		{"https://*.example", false},
		{"app.example", false},
		{"ftp://app.example", false},
		{"https://user@app.example", false},
		{"https://app.example?x=1", false},
		{"", false},
	}
	for _, tc := range cases {
		t.Run(tc.origin, func(t *testing.T) {
			cfg := testConfig()
			cfg.OnCall = func(*Call) {}
			cfg.AllowedOrigins = []string{tc.origin}
			err := cfg.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// BenchmarkRefusal: one refused offer through the handler (recorder, no
// socket): what a flood costs per request beyond HTTP itself.
func BenchmarkRefusal(b *testing.B) {
	cfg := testConfig()
	cfg.OnCall = func(*Call) {}
	cfg.Admit = func() (conn.Admission, error) {
		return nil, &conn.Refusal{Cause: conn.RefusedFull, RetryAfter: time.Second}
	}
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		if rec := serve(h, http.MethodPost, "/offer", "", `{}`); rec.Code != http.StatusServiceUnavailable {
			b.Fatal(rec.Code)
		}
	}
}
