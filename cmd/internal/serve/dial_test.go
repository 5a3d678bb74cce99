package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
)

// fakeDialer answers each dial with the next scripted result and keeps
// the requests it got.
type fakeDialer struct {
	mu   sync.Mutex
	got  []DialRequest
	next error
}

var _ Dialer = (*fakeDialer)(nil)

func (f *fakeDialer) Trunks() []string { return []string{"carrier", "pbx"} }

func (f *fakeDialer) Dial(_ context.Context, req DialRequest) (messages.CallID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req)
	if f.next != nil {
		return "", f.next
	}
	return "sip-out-1", nil
}

// post sends a dial body over the in-memory listener.
func post(t *testing.T, ln *pipetest.Listener, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest("POST", "http://brisvox/operator/calls", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%v in %q", err, data)
	}
	return resp.StatusCode, resp.Header, out
}

// TestOperatorDial: POST /operator/calls needs the token, checks its
// body (each bad field a 400 naming the field, the dialer not called),
// hands a good one to the Dialer, and answers each outcome with its
// status and typed name, counted in brisvox_outbound_calls_total.
// Mutations caught: the token not checked (a dial without it), a bad
// variable let through (CR/LF in a value reaches the dialer), an
// outcome mapped to the wrong status (busy as 502), the metric not
// counted per outcome.
func TestOperatorDial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2}, &simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		d := &fakeDialer{}
		if err := s.EnableDial("short", d); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("a short token: %v", err)
		}
		if err := s.EnableDial(testToken, d); err != nil {
			t.Fatal(err)
		}
		good := `{"trunk":"carrier","to":"+15551234","variables":{"name":"Ada"},"ring_timeout":"20s","wait_for_callee":true}`

		for _, tok := range []string{"", "op-token-wrong-0123456789"} {
			if code, _, _ := post(t, ln, tok, good); code != http.StatusUnauthorized {
				t.Errorf("token %q: %d, want 401", tok, code)
			}
		}
		bad := map[string]string{
			"not json":          `{"trunk":`,
			"unknown field":     `{"trunk":"carrier","to":"1","colour":"red"}`,
			"no trunk":          `{"to":"1"}`,
			"unknown trunk":     `{"trunk":"other","to":"1"}`,
			"no to":             `{"trunk":"carrier"}`,
			"CRLF in to":        `{"trunk":"carrier","to":"1\r\nX: y"}`,
			"NUL in from":       `{"trunk":"carrier","to":"1","from":"2\u0000"}`,
			"agent file":        `{"trunk":"carrier","to":"1","agent":"/etc/passwd"}`,
			"bad variable name": `{"trunk":"carrier","to":"1","variables":{"a b":"x"}}`,
			"LF in a value":     `{"trunk":"carrier","to":"1","variables":{"name":"Ada\nX"}}`,
			"long value":        `{"trunk":"carrier","to":"1","variables":{"name":"` + strings.Repeat("a", 1025) + `"}}`,
			"too many":          `{"trunk":"carrier","to":"1","variables":{` + manyVars(33) + `}}`,
			"bad ring timeout":  `{"trunk":"carrier","to":"1","ring_timeout":"1h"}`,
			"huge body":         `{"trunk":"carrier","to":"` + strings.Repeat("1", 20000) + `"}`,
		}
		for name, body := range bad {
			if code, _, out := post(t, ln, testToken, body); code != http.StatusBadRequest || out["error"] == "" {
				t.Errorf("%s: %d %v, want 400", name, code, out)
			}
		}
		if len(d.got) != 0 {
			t.Fatalf("bad bodies reached the dialer: %d", len(d.got))
		}

		code, _, out := post(t, ln, testToken, good)
		if code != http.StatusCreated || out["call"] != "sip-out-1" || out["outcome"] != "answered" {
			t.Errorf("answered: %d %v", code, out)
		}
		if len(d.got) != 1 || d.got[0].Variables["name"] != "Ada" || d.got[0].RingTimeout.Seconds() != 20 || !d.got[0].WaitForCallee {
			t.Errorf("the dialer got %+v", d.got)
		}

		outcomes := []struct {
			err     error
			outcome string
			status  int
		}{
			{&DialError{Outcome: DialBusy, Code: 486}, "busy", http.StatusConflict},
			{&DialError{Outcome: DialNoAnswer}, "no_answer", http.StatusGatewayTimeout},
			{&DialError{Outcome: DialDeclined, Code: 603}, "declined", http.StatusConflict},
			{&DialError{Outcome: DialRejected, Code: 404}, "rejected", http.StatusBadGateway},
			{&DialError{Outcome: DialUnavailable, Code: 503}, "unavailable", http.StatusBadGateway},
			{&DialError{Outcome: DialFailed, Code: 604}, "failed", http.StatusBadGateway},
			{&DialError{Outcome: DialAuthFailed, Code: 407}, "auth_failed", http.StatusBadGateway},
			{&DialError{Outcome: DialTransport}, "transport", http.StatusBadGateway},
			{&DialError{Outcome: DialLimited}, "limited", http.StatusTooManyRequests},
			{&DialError{Outcome: DialRefused}, "refused", http.StatusServiceUnavailable},
			{errors.New("something else"), "failed", http.StatusBadGateway},
			{&DialError{Outcome: "made_up"}, "failed", http.StatusBadGateway},
		}
		for _, tc := range outcomes {
			d.next = tc.err
			code, hdr, out := post(t, ln, testToken, good)
			if code != tc.status || out["outcome"] != tc.outcome {
				t.Errorf("%v: %d %v, want %d %s", tc.err, code, out, tc.status, tc.outcome)
			}
			var de *DialError
			if errors.As(tc.err, &de) && de.Code != 0 && out["code"] != float64(de.Code) {
				t.Errorf("%v: code %v", tc.err, out["code"])
			}
			if (tc.outcome == "limited" || tc.outcome == "refused") && hdr.Get("Retry-After") == "" {
				t.Errorf("%s: no Retry-After", tc.outcome)
			}
		}

		_, mbody := get(t, ln, "/metrics")
		text, _ := mbody["body"].(string)
		for _, want := range []string{
			`brisvox_outbound_calls_total{agent="test agent",outcome="answered",trunk="carrier"} 1`,
			`brisvox_outbound_calls_total{agent="test agent",outcome="busy",trunk="carrier"} 1`,
			`brisvox_outbound_calls_total{agent="test agent",outcome="failed",trunk="carrier"} 3`,
			`brisvox_outbound_calls_total{agent="test agent",outcome="busy",trunk="pbx"} 0`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
}

func manyVars(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"v` + strings.Repeat("x", i) + `":"1"`)
	}
	return b.String()
}
