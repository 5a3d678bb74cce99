package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestChaosBenchFlags: bad sizes are refused with the usage status before
// any run (mutation seen failing: --pairs 0 accepted, then indexing an
// empty list of differences).
func TestChaosBenchFlags(t *testing.T) {
	for _, args := range [][]string{{"--calls", "0"}, {"--pairs", "0"}, {"--hold", "soon"}, {"--nope"}} {
		var out, errb bytes.Buffer
		if got := chaosBench(args, &out, &errb); got != 2 {
			t.Errorf("%v: status %d, want 2", args, got)
		}
	}
}

func TestChaosLatencyAndPrint(t *testing.T) {
	l := latencyOf([]time.Duration{time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond})
	if l.Turns != 3 || l.P50MS != 2 || l.P99MS != 40 || l.MaxMS != 40 {
		t.Fatalf("latencyOf: %+v", l)
	}
	var b bytes.Buffer
	printChaos(&b, chaosBenchReport{Command: "brisvox-bench chaos", GoalMS: 1, Pairs: []chaosPair{{
		WithFaults: chaosRun{Faults: true, Violations: []string{"c0001-0 (llm_503): broken"}},
		DiffP99MS:  1.5,
	}}, DiffP99MS: [3]float64{1.5, 1.5, 1.5}})
	for _, want := range []string{"with faults", "no faults", "c0001-0 (llm_503): broken", "goal <= 1 ms missed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
}
