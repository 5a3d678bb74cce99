package serve

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/pipetest"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

const testToken = "op-token-0123456789abcdef"

// do sends an operator request over the in-memory listener.
func do(t *testing.T, ln *pipetest.Listener, method, path, token string) (int, map[string]any) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequest(method, "http://brisvox"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%s %s: %v in %q", method, path, err, body)
	}
	return resp.StatusCode, out
}

// TestOperatorAPI: with a token, an operator lists the live calls, reads
// a call's tree, restarts one stage while the call goes on, and hangs it
// up; without the token, or with a wrong one, nothing is shown. Mutations
// caught: the token not checked (200 without it), the restart not routed
// (the stt stage's restart count stays 0), the hang-up not sent (the call
// stays live), an unknown call answered as a gateway error (not 404).
func TestOperatorAPI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2}, &simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		if err := s.EnableOperator("short"); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("a short token: %v, want ErrInvalidConfig", err)
		}
		if err := s.EnableOperator(testToken); err != nil {
			t.Fatal(err)
		}
		c := newFakeConn("c1", sim.NewScenario("long").Silence(60*time.Second))
		s.Start(c)
		time.Sleep(time.Second)

		for _, tok := range []string{"", "op-token-wrong-0123456789"} {
			if code, _ := do(t, ln, "GET", "/operator/calls", tok); code != http.StatusUnauthorized {
				t.Errorf("token %q: %d, want 401", tok, code)
			}
		}
		code, body := do(t, ln, "GET", "/operator/calls", testToken)
		if calls, _ := body["calls"].([]any); code != 200 || len(calls) != 1 || calls[0].(map[string]any)["id"] != "c1" {
			t.Errorf("calls: %d %v", code, body)
		}

		restarts := func() float64 {
			_, body := do(t, ln, "GET", "/operator/calls/c1", testToken)
			tree, _ := body["tree"].(map[string]any)
			children, _ := tree["children"].([]any)
			var names []string
			for _, ch := range children {
				m := ch.(map[string]any)
				names = append(names, m["name"].(string))
				if m["name"] == "stt" {
					return m["restarts"].(float64)
				}
			}
			t.Fatalf("no stt stage in the tree: %v", names)
			return 0
		}
		if n := restarts(); n != 0 {
			t.Fatalf("stt restarts %v before", n)
		}
		if code, body := do(t, ln, "POST", "/operator/calls/c1/restart?stage=stt", testToken); code != 200 || body["restarted"] != "stt" {
			t.Errorf("restart: %d %v", code, body)
		}
		time.Sleep(100 * msec)
		if n := restarts(); n != 1 {
			t.Errorf("stt restarts %v after the restart, want 1", n)
		}
		if code, body := do(t, ln, "POST", "/operator/calls/c1/restart?stage=mixer", testToken); code != http.StatusBadRequest || !slices.Contains(body["stages"].([]any), any("stt")) {
			t.Errorf("unknown stage: %d %v", code, body)
		}
		for _, p := range []string{"/operator/calls/nope"} {
			if code, _ := do(t, ln, "GET", p, testToken); code != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", p, code)
			}
		}
		if code, _ := do(t, ln, "POST", "/operator/calls/nope/hangup", testToken); code != http.StatusNotFound {
			t.Errorf("hangup of an unknown call: %d, want 404", code)
		}
		if code, _ := do(t, ln, "POST", "/operator/calls/c1/hangup", testToken); code != http.StatusAccepted {
			t.Errorf("hangup: %d, want 202", code)
		}
		time.Sleep(time.Second)
		if live := s.Live(); len(live) != 0 {
			t.Errorf("live after the operator's hang-up: %v", live)
		}
		if _, hang := c.snapshot(); len(hang) == 0 {
			t.Error("the connection was not hung up")
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}
