package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

type sse struct {
	name string
	data map[string]any
}

// readEvents reads a server-sent event stream into a channel until it ends.
func readEvents(t *testing.T, resp *http.Response) <-chan sse {
	out := make(chan sse, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					t.Errorf("event %s: %v in %q", ev.name, err, line)
				}
			case line == "" && ev.name != "":
				out <- ev
				ev = sse{}
			}
		}
	}()
	return out
}

// next is the next event named name, skipping others, within d.
func next(t *testing.T, evs <-chan sse, name string, d time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("the stream ended before a %s event", name)
			}
			if ev.name == name {
				return ev.data
			}
		case <-deadline:
			t.Fatalf("no %s event in %s", name, d)
		}
	}
}

// TestOperatorEvents: the operator's event stream starts with a snapshot
// of the live calls and the node, then sends a call when it changed (a
// restart), the node when it changed (a drain), a call's end with its
// reason, and ends when the server shuts down. Mutations caught: the
// version not bumped by follow (no call event after the restart), ended
// calls not found (no ended event), the node's drain not compared (no
// node event), the stream not ending with the server (stop hangs).
func TestOperatorEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2, Node: "n1"}, &simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		if err := s.EnableOperator(testToken); err != nil {
			t.Fatal(err)
		}
		c := newFakeConn("c1", sim.NewScenario("long").Silence(60*time.Second))
		s.Start(c)
		time.Sleep(time.Second)

		client := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext}}
		defer client.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://brisvox/operator/events", nil)
		if resp, err := client.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("events without a token: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events: %v %v", resp, err)
		}
		defer resp.Body.Close()
		evs := readEvents(t, resp)

		snap := next(t, evs, "snapshot", time.Second)
		if calls := snap["calls"].([]any); len(calls) != 1 || calls[0].(map[string]any)["id"] != "c1" {
			t.Errorf("snapshot calls: %v", snap["calls"])
		}
		if nodes := snap["nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["node"] != "n1" {
			t.Errorf("snapshot nodes: %v", snap["nodes"])
		}

		if code, _ := do(t, ln, "POST", "/operator/calls/c1/restart?stage=vad", testToken); code != 200 {
			t.Fatalf("restart: %d", code)
		}
		if call := next(t, evs, "call", time.Second); call["id"] != "c1" || call["restarts"] != float64(1) {
			t.Errorf("call event after the restart: %v", call)
		}
		s.Drain()
		if node := next(t, evs, "node", time.Second); node["draining"] != true {
			t.Errorf("node event after the drain: %v", node)
		}
		if code, _ := do(t, ln, "POST", "/operator/calls/c1/hangup", testToken); code != http.StatusAccepted {
			t.Fatalf("hangup: %d", code)
		}
		if ended := next(t, evs, "ended", 2*time.Second); ended["id"] != "c1" || !strings.Contains(ended["reason"].(string), "operator") {
			t.Errorf("ended event: %v", ended)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		for range evs {
		}
		_ = c.Close()
	})
}
