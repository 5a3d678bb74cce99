package chaostest

import (
	"reflect"
	"testing"

	"github.com/brisvox/brisvox/messages"
)

// TestPlansAreSeeded: a call's plan depends on the seed and its index
// only; the run without faults places the same healthy calls and the
// same latencies for the others (mutation seen failing: the latencies
// drawn after the fault's parameters, which then shift them).
func TestPlansAreSeeded(t *testing.T) {
	for i := range 300 {
		a, b := newPlan(1, i, "c", true), newPlan(1, i, "c", true)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("call %d: two draws differ", i)
		}
		twin := newPlan(1, i, "c", false)
		if twin.fault != "" {
			t.Fatalf("call %d drew %s without faults", i, twin.fault)
		}
		if healthy(i) && !reflect.DeepEqual(a, twin) {
			t.Fatalf("healthy call %d differs in the run without faults", i)
		}
		if a.sttFinal != twin.sttFinal || a.llmFirst != twin.llmFirst || a.ttsFirst != twin.ttsFirst {
			t.Fatalf("call %d: latencies differ without its fault", i)
		}
		if healthy(i) != (a.fault == "") {
			t.Fatalf("call %d: healthy %v, fault %q", i, healthy(i), a.fault)
		}
	}
	if reflect.DeepEqual(newPlan(1, 5, "c", true), newPlan(2, 5, "c", true)) {
		t.Error("seeds 1 and 2 drew the same call")
	}
}

// TestEveryFaultIsDrawn: the real-time test's calls (50 callers, 60 s, seed
// 1) and the bench's (200 callers) draw every fault, some bookings among
// the healthy calls, some tts panics on the first answer's first delta
// (mutation seen failing: the panics drawn from the second delta on, as
// before the tts stage's fix), and every call's script fits its period.
func TestEveryFaultIsDrawn(t *testing.T) {
	for _, cfg := range []Config{ciConfig, {Calls: 200, Hold: 60e9, Seed: 1}} {
		cfg = cfg.withDefaults()
		seen := map[string]int{}
		tools, firstDelta := 0, 0
		for k := range cfg.rounds() {
			for s := range cfg.Calls {
				p := newPlan(cfg.Seed, k*cfg.Calls+s, "c", true)
				seen[p.fault]++
				if p.tool && p.fault == "" {
					tools++
				}
				if p.panicStage == messages.StageTTS && p.panicN == 1 {
					firstDelta++
				}
				if d := p.script.duration(); d > Period-2e9 {
					t.Errorf("%s: script of %v leaves under 2 s of its %v period", p, d, Period)
				}
			}
		}
		for _, f := range Faults {
			if seen[f] == 0 {
				t.Errorf("%d calls: no call drew %s (change the seed)", cfg.Calls, f)
			}
		}
		if tools == 0 {
			t.Errorf("%d calls: no healthy call books", cfg.Calls)
		}
		if firstDelta == 0 {
			t.Errorf("%d calls: no tts panic on the first answer's first delta", cfg.Calls)
		}
		t.Logf("%d calls over %d rounds: %v, %d healthy bookings, %d tts panics on the first delta", cfg.Calls, cfg.rounds(), seen, tools, firstDelta)
	}
}
