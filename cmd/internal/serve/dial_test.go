package serve

import (
	"fmt"
	"time"

	"context"
	"encoding/json"
	"errors"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/sim"
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

// startingDialer answers each dial with a call it starts on the server,
// as the SIP mount does: StartDialed with the request.
type startingDialer struct {
	s  *Server
	sc *sim.Scenario
	n  int
}

func (d *startingDialer) Trunks() []string { return []string{"carrier"} }

func (d *startingDialer) Dial(_ context.Context, req DialRequest) (messages.CallID, error) {
	d.n++
	c := newFakeConn(fmt.Sprintf("sip-out-%d", d.n), d.sc)
	if err := d.s.StartDialed(c, req); err != nil {
		return "", err
	}
	return messages.CallID(c.ID()), nil
}

// needsName is an agent whose prompt uses {{name}}: it checks the dial's
// variables and records what each call's session got.
type needsName struct {
	simAgent
	mu  sync.Mutex
	got []*DialRequest
}

func (a *needsName) CheckVariables(vars map[string]string) error {
	if _, ok := vars["name"]; !ok {
		return errors.New("the agent uses {{name}}: the dial gives no value")
	}
	return nil
}

func (a *needsName) Session(env CallEnv) (session.Config, error) {
	a.mu.Lock()
	a.got = append(a.got, env.Dial)
	a.mu.Unlock()
	return a.simAgent.Session(env)
}

// TestOperatorDialStartsTheCall: a dial that lacks a variable the agent
// uses is a 400 and rings nobody (mutation: the check skipped, the
// dialer is called); an answered one starts its session with the
// request (mutation: CallEnv.Dial not passed, the session sees nil); a
// call that cannot start is not reported answered (mutation:
// StartDialed returns before the start's result, the 201 comes anyway).
func TestOperatorDialStartsTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &needsName{simAgent: simAgent{responses: []providertest.Response{{Text: "Hi."}}}}
		s, ln, stop := serving(t, Config{MaxCalls: 2}, a)
		d := &startingDialer{s: s, sc: sim.NewScenario("dialled").Silence(2 * time.Second)}
		if err := s.EnableDial(testToken, d); err != nil {
			t.Fatal(err)
		}
		if code, _, out := post(t, ln, testToken, `{"trunk":"carrier","to":"+15551234"}`); code != http.StatusBadRequest || d.n != 0 {
			t.Errorf("no name: %d %v, dialled %d, want 400 and no dial", code, out, d.n)
		}
		code, _, out := post(t, ln, testToken, `{"trunk":"carrier","to":"+15551234","variables":{"name":"Ada"},"wait_for_callee":true}`)
		if code != http.StatusCreated || out["call"] != "sip-out-1" {
			t.Fatalf("answered: %d %v", code, out)
		}
		a.mu.Lock()
		got := a.got
		a.mu.Unlock()
		if len(got) != 1 || got[0] == nil || got[0].Variables["name"] != "Ada" || !got[0].WaitForCallee {
			t.Errorf("the session got %+v, want the dial's request", got)
		}
		a.fail = errors.New("no provider")
		if code, _, out := post(t, ln, testToken, `{"trunk":"carrier","to":"+15551234","variables":{"name":"Ada"}}`); code == http.StatusCreated {
			t.Errorf("a call whose session failed to start: %d %v", code, out)
		}
		if err := stop(); err != nil {
			t.Error(err)
		}
		// Messages to the stopped calls' actors are dead letters: let
		// protoactor's dead-letter throttle (a goroutine on a one-period
		// ticker) run out in the bubble (virtual time).
		time.Sleep(2 * time.Second)
	})
}
