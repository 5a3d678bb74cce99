package serve

import (
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestOperatorCallSummary: the list shows what an operator needs of each
// call, kept from its events: its node, transport, agent, state, turns,
// the last turn's latency and its restarts; a call's page shows its tree
// and its turns' timelines from the end of speech. Mutations caught:
// follow not counting latency events (turns 0), restart events not
// counted (restarts 0 after a restart), timelines not zeroed at vad_stop
// (its mark not 0).
func TestOperatorCallSummary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 2, Node: "n1"}, &simAgent{responses: []providertest.Response{{Text: "Hi there."}, {Text: "Sure."}}})
		if err := s.EnableOperator(testToken); err != nil {
			t.Fatal(err)
		}
		c := newFakeConn("c1", sim.NewScenario("two").Silence(time.Second).Speak("hello", time.Second).Silence(3*time.Second).Speak("thanks", time.Second).Silence(60*time.Second))
		s.Start(c)
		time.Sleep(8 * time.Second)

		code, body := do(t, ln, "GET", "/operator/calls", testToken)
		calls, _ := body["calls"].([]any)
		if code != 200 || body["node"] != "n1" || len(calls) != 1 {
			t.Fatalf("calls: %d %v", code, body)
		}
		sum := calls[0].(map[string]any)
		if sum["id"] != "c1" || sum["node"] != "n1" || sum["agent"] != "test agent" || sum["transport"] != "unknown" {
			t.Errorf("summary: %v", sum)
		}
		if sum["turns"] != float64(2) || sum["last_turn_ms"] == nil || sum["last_turn_ms"].(float64) <= 0 {
			t.Errorf("turns %v, last turn %v: want 2 and a latency", sum["turns"], sum["last_turn_ms"])
		}
		if sum["state"] != "listening" || sum["age_ms"].(float64) < 7000 {
			t.Errorf("state %v age %v", sum["state"], sum["age_ms"])
		}

		if code, _ := do(t, ln, "POST", "/operator/calls/c1/restart?stage=tts", testToken); code != 200 {
			t.Fatalf("restart: %d", code)
		}
		time.Sleep(100 * msec)
		_, body = do(t, ln, "GET", "/operator/calls/c1", testToken)
		call, _ := body["call"].(map[string]any)
		if call["restarts"] != float64(1) {
			t.Errorf("restarts after one restart: %v", call["restarts"])
		}
		turns, _ := body["turns"].([]any)
		if len(turns) != 2 {
			t.Fatalf("turns: %v", body["turns"])
		}
		for _, tt := range turns {
			marks := tt.(map[string]any)["marks_ms"].(map[string]any)
			if marks["vad_stop"] != float64(0) {
				t.Errorf("vad_stop at %v, want 0", marks["vad_stop"])
			}
			if out, ok := marks["first_audio_out"].(float64); !ok || out <= 0 {
				t.Errorf("first_audio_out %v", marks["first_audio_out"])
			}
		}
		if tree, _ := body["tree"].(map[string]any); tree["name"] == nil || len(tree["children"].([]any)) != 8 {
			t.Errorf("tree: %v", tree)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}

// TestOperatorDrain: an operator's drain refuses new calls as draining
// (Admit, Health for SIP's OPTIONS, /readyz 503) while the live call goes
// on to its end; undrain admits again; a drain of another node's name is
// 404, an undrain while shutting down 409. Mutations caught: admitLocked
// not looking at the operator's drain (the new call admitted), Health
// only for the shutdown (nil while drained), the drain cutting live calls
// (the call ends), undrain allowed during the shutdown.
func TestOperatorDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ln, stop := serving(t, Config{MaxCalls: 4, Node: "n1"}, &simAgent{responses: []providertest.Response{{Text: "Hi."}}})
		if err := s.EnableOperator(testToken); err != nil {
			t.Fatal(err)
		}
		c := newFakeConn("c1", sim.NewScenario("long").Silence(60*time.Second))
		s.Start(c)
		time.Sleep(time.Second)

		if code, _ := do(t, ln, "POST", "/operator/nodes/n2/drain", testToken); code != http.StatusNotFound {
			t.Errorf("drain of an unknown node: %d, want 404", code)
		}
		code, body := do(t, ln, "POST", "/operator/nodes/n1/drain", testToken)
		if code != http.StatusAccepted || body["draining"] != true || body["drain"].(map[string]any)["by"] != "operator" || body["drain"].(map[string]any)["live_at_start"] != float64(1) {
			t.Fatalf("drain: %d %v", code, body)
		}
		var r *conn.Refusal
		if _, err := s.Admit(); !errors.As(err, &r) || r.Cause != conn.RefusedDraining {
			t.Errorf("a new call while drained: %v, want a draining refusal", err)
		}
		if h := s.Health(); h == nil || h.Cause != conn.RefusedDraining {
			t.Errorf("Health while drained: %v", h)
		}
		if code, body := get(t, ln, "/readyz"); code != http.StatusServiceUnavailable || body["reason"] != "drained by an operator" {
			t.Errorf("readyz while drained: %d %v", code, body)
		}
		time.Sleep(5 * time.Second)
		if live := s.Live(); len(live) != 1 {
			t.Errorf("live calls 5 s into the drain: %v, want the call going on", live)
		}
		_, body = do(t, ln, "GET", "/operator/nodes", testToken)
		if nodes, _ := body["nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["draining"] != true {
			t.Errorf("nodes: %v", body)
		}
		if code, body := do(t, ln, "DELETE", "/operator/nodes/n1/drain", testToken); code != 200 || body["draining"] != false {
			t.Errorf("undrain: %d %v", code, body)
		}
		a, err := s.Admit()
		if err != nil {
			t.Errorf("a new call after the undrain: %v", err)
		} else {
			a.Release()
		}
		if h := s.Health(); h != nil {
			t.Errorf("Health after the undrain: %v", h)
		}

		// The shutdown's drain cannot be undone by an operator.
		s.mu.Lock()
		s.draining = true
		s.mu.Unlock()
		if _, err := s.Undrain(); !errors.Is(err, ErrRefused) {
			t.Errorf("undrain while shutting down: %v, want ErrRefused", err)
		}
		s.mu.Lock()
		s.draining = false
		s.mu.Unlock()
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	})
}
