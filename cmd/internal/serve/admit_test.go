package serve

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/admit"
	"github.com/brisvox/brisvox/media/conn"
)

// measured is a meter that learnt 0.04 cores per call on 2 cores.
func measured(t *testing.T) *admit.Meter {
	t.Helper()
	m, err := admit.New(admit.Config{Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(0, 0)
	m.Sample(at, 0, 10)
	for i := 1; i <= 10; i++ {
		m.Sample(at.Add(time.Duration(i)*time.Second), time.Duration(i)*400*time.Millisecond, 10)
	}
	return m
}

// TestAdmissionMeasured: with a meter, the server admits calls while the
// estimate after one more stays under the ceiling and refuses the next as
// overloaded (503 and Retry-After in every transport), counted by cause;
// the call limit still applies first; /readyz shows the estimate; Serve
// runs the meter's sampler and stops it (the bubble holds no goroutine
// at the end). Mutation caught: admitLocked without the meter's check
// admits all 60.
func TestAdmissionMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cpu := func() (time.Duration, error) { return 0, nil }
		s, ln, stop := serving(t, Config{MaxCalls: 60, RetryAfter: 2 * time.Second, Meter: measured(t), CPUTime: cpu}, &simAgent{})
		var slots []conn.Admission
		var refusal *conn.Refusal
		for range 60 {
			a, err := s.Admit()
			if err != nil {
				refusal = conn.RefusalOf(err)
				break
			}
			slots = append(slots, a)
		}
		// (0.04·37)/2 = 0.74 admits the 37th; 0.76 refuses the 38th.
		if len(slots) != 37 || refusal == nil || refusal.Cause != conn.RefusedOverloaded || refusal.RetryAfterSeconds() != 2 {
			t.Fatalf("admitted %d, refusal %+v; want 37, then overloaded with Retry-After 2", len(slots), refusal)
		}
		if !strings.Contains(refusal.Detail, "76%") || !strings.Contains(refusal.Detail, "ceiling 75%") {
			t.Errorf("detail %q", refusal.Detail)
		}
		if got := s.stats.Snapshot()["refused_overloaded"]; got != 1 {
			t.Errorf("refused_overloaded %d, want 1", got)
		}
		code, body := get(t, ln, "/readyz")
		adm, _ := body["admission"].(map[string]any)
		if code != 200 || adm == nil || adm["per_call_cores"] == nil || adm["ceiling"] != 0.75 {
			t.Errorf("readyz %d %v", code, body)
		}
		_, mb := get(t, ln, "/metrics")
		if text, _ := mb["body"].(string); !strings.Contains(text, `brisvox_calls_refused_total{agent="test agent",reason="overloaded"} 1`) ||
			!strings.Contains(text, "brisvox_admission_per_call_cores") {
			t.Errorf("metrics lack the overloaded refusal or the meter's gauges")
		}
		slots[0].Release()
		if _, err := s.Admit(); err != nil {
			t.Errorf("a released slot under the ceiling was refused: %v", err)
		}
		for _, a := range slots[1:] {
			a.Release()
		}
		_ = stop()
	})
}

// TestAdmissionLimitFirst: under the ceiling, the call limit refuses as
// full: the two checks keep their causes.
func TestAdmissionLimitFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _, stop := serving(t, Config{MaxCalls: 5, Meter: measured(t)}, &simAgent{})
		var slots []conn.Admission
		for range 5 {
			a, err := s.Admit()
			if err != nil {
				t.Fatal(err)
			}
			slots = append(slots, a)
		}
		if _, err := s.Admit(); conn.RefusalOf(err) == nil || conn.RefusalOf(err).Cause != conn.RefusedFull {
			t.Errorf("the 6th of 5 calls: %v, want full", err)
		}
		for _, a := range slots {
			a.Release()
		}
		_ = stop()
	})
}
