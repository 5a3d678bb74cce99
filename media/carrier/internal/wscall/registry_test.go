package wscall

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/carriertest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/rs/zerolog"
)

// TestRefusalAnswers: every refusal before the upgrade answers 503 with
// Retry-After and the JSON {"error","cause"}; a closed registry answers
// cause "draining"; a check's denial answers its status and takes no
// slot; the refusals are logged as a tally (strict JSON, one line for the
// burst, not one per refusal). Mutations caught (each seen failing): the
// old plain-text "not admitted" answer without Retry-After, Admit asked
// before the check (a forbidden request would take a slot), a log line
// per refusal.
func TestRefusalAnswers(t *testing.T) {
	cases := []struct {
		name       string
		admit      conn.Admitter
		check      func(*http.Request) *Denial
		closed     bool
		status     int
		retryAfter string
		cause      string
		error      string
	}{
		{name: "full", admit: (&carriertest.Admitter{Limit: 0, RetryAfter: 3 * time.Second}).Admit,
			status: 503, retryAfter: "3", cause: "full", error: "transport: call not admitted: full (0 calls)"},
		{name: "rate limited", admit: func() (conn.Admission, error) {
			return nil, &conn.Refusal{Cause: conn.RefusedRateLimited, RetryAfter: 1500 * time.Millisecond}
		}, status: 503, retryAfter: "2", cause: "rate_limited", error: "transport: call not admitted: rate_limited"},
		{name: "untyped error", admit: func() (conn.Admission, error) { return nil, errors.New("boom") },
			status: 503, retryAfter: "1", cause: "full", error: "transport: call not admitted: full"},
		{name: "closed", closed: true, status: 503, retryAfter: "5", cause: "draining",
			error: "transport: call not admitted: draining (shutting down)"},
		{name: "denied", admit: (&carriertest.Admitter{Limit: 1}).Admit,
			check:  func(*http.Request) *Denial { return &Denial{Status: 403, Cause: "origin", Message: "no"} },
			status: 403, cause: "origin", error: "no"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			admitted := 0
			admit := tc.admit
			if admit != nil {
				inner := admit
				admit = func() (conn.Admission, error) { admitted++; return inner() }
			}
			stats := NewCounters("refused", "forbidden", "bad_upgrades", "upgrades")
			r := NewRegistry(RegistryConfig{What: "test", Admit: admit, Check: tc.check, Stats: stats,
				Log: zerolog.New(&log)})
			if tc.closed {
				r.Close()
			}
			for range 5 {
				w := httptest.NewRecorder()
				if _, _, ok := r.Accept(w, httptest.NewRequest(http.MethodGet, "/x", nil)); ok {
					t.Fatal("accepted")
				}
				if w.Code != tc.status || w.Header().Get("Retry-After") != tc.retryAfter {
					t.Fatalf("status %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
				}
				var body struct{ Error, Cause string }
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Cause != tc.cause || body.Error != tc.error {
					t.Fatalf("body %q: %v", w.Body.String(), err)
				}
			}
			if tc.check != nil && admitted != 0 {
				t.Fatalf("a denied request was admitted %d times", admitted)
			}
			r.Close()
			if got := stats.Get("refused") + stats.Get("forbidden"); got != 5 {
				t.Fatalf("counted %d refusals, want 5", got)
			}
			if tc.closed {
				return // refusals after Close are counted, not logged
			}
			if n := carriertest.StrictJSONLines(t, log.Bytes()); n < 1 || n > 2 {
				t.Fatalf("%d log lines for 5 refusals, want the first and one summary:\n%s", n, log.String())
			}
		})
	}
}
