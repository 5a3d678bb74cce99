package main

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media/conn"
)

// TestSpinIters: the synthetic cost's arithmetic, cores of a core over a
// 20 ms window at a calibrated cost per iteration. Mutation caught:
// dividing by the window instead of multiplying (or a window in ms)
// gives iterations off by a factor of the window.
func TestSpinIters(t *testing.T) {
	for _, c := range []struct {
		name      string
		cores     float64
		frame     time.Duration
		nsPerIter float64
		want      int
	}{
		{"a tenth of a core at 2 ns", 0.1, 20 * time.Millisecond, 2, 1_000_000},
		{"half a core at 1 ns", 0.5, 20 * time.Millisecond, 1, 10_000_000},
		{"rounded", 0.1, 20 * time.Millisecond, 3, 666_667},
		{"no cost", 0, 20 * time.Millisecond, 2, 0},
		{"no calibration", 0.1, 20 * time.Millisecond, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := spinIters(c.cores, c.frame, c.nsPerIter); got != c.want {
				t.Errorf("spinIters(%v, %v, %v) = %d, want %d", c.cores, c.frame, c.nsPerIter, got, c.want)
			}
		})
	}
}

// TestPlanAdmission: the hold begins settle after the last offer, and a
// call admitted first is still live at the hold's end. Mutation caught:
// a call length without the warm-up would hang the first calls up in
// the middle of the hold (streams ending inside the measured window).
func TestPlanAdmission(t *testing.T) {
	p := planAdmission(40, 2, 5*time.Second, 30*time.Second)
	want := admissionPlan{Offer: 20 * time.Second, Warmup: 25 * time.Second, Length: 60 * time.Second, Timeout: 110 * time.Second}
	if p != want {
		t.Fatalf("plan %+v, want %+v", p, want)
	}
	// Invariants over a few shapes: the first call outlives the hold,
	// the last offer comes before it, sipp's bound covers the last call.
	for _, c := range []struct {
		calls        int
		rate         float64
		settle, hold time.Duration
	}{{10, 5, 2 * time.Second, 5 * time.Second}, {60, 3, 5 * time.Second, 30 * time.Second}, {1, 0.5, 0, time.Second}} {
		p := planAdmission(c.calls, c.rate, c.settle, c.hold)
		if p.Length <= p.Warmup+c.hold || p.Offer > p.Warmup || p.Timeout <= p.Offer+p.Length {
			t.Errorf("plan of %+v: %+v", c, p)
		}
	}
}

// TestMeasureGapsPercentiles: the jitter figures the report prints,
// from arrivals of known gaps. Mutation caught: a p99 index of
// len*99/100-1 or a signed gap (|gap-20ms| read as gap-20ms makes the
// early packets' negative gaps the smallest) gives other figures.
func TestMeasureGapsPercentiles(t *testing.T) {
	from := time.Unix(100, 0)
	// One stream: 100 gaps, the i-th 20 ms + (i mod 10) ms for even i,
	// - (i mod 10) ms for odd i (early packets), the 50th 120 ms.
	var arr []time.Time
	at := from
	arr = append(arr, at)
	for i := range 100 {
		d := 20*time.Millisecond + time.Duration(i%10)*time.Millisecond
		if i%2 == 1 {
			d = 20*time.Millisecond - time.Duration(i%10)*time.Millisecond
		}
		if i == 50 {
			d = 120 * time.Millisecond
		}
		at = at.Add(d)
		arr = append(arr, at)
	}
	g := measureGaps([][]time.Time{arr}, from, at, 101)
	if g.packets != 101 || g.gaps != 100 || g.short != 0 {
		t.Fatalf("figures %+v, want 101 packets, 100 gaps, none short", g)
	}
	// |gaps| sorted: ten each of 0..9 ms with one 0 replaced by 100 ms:
	// index 50 is 5 ms, index 99 is 100 ms.
	if g.p50 != 5 || g.p99 != 100 || g.max != 100 {
		t.Errorf("p50 %.2f, p99 %.2f, max %.2f; want 5, 100, 100", g.p50, g.p99, g.max)
	}
	// A stream with 80 of its 101 packets is short of 90%.
	g = measureGaps([][]time.Time{arr[:80]}, from, at, 101)
	if g.short != 1 {
		t.Errorf("short %d, want 1", g.short)
	}
}

// TestMachineShares: /proc/stat's first line read as busy, idle and
// stolen time. Mutation caught: iowait counted busy reads 55% instead
// of 45%.
func TestMachineShares(t *testing.T) {
	a := parseMachineTimes("cpu  100 0 50 800 20 0 10 20 0 0\ncpu0 1 2 3\n")
	b := parseMachineTimes("cpu  150 10 80 880 40 0 10 30 0 0\n")
	// busy +90 (user 50, nice 10, system 30), idle +100 (80 + 20 iowait), steal +10
	busy, steal := b.shares(a)
	if math.Abs(busy-0.45) > 1e-9 || math.Abs(steal-0.05) > 1e-9 {
		t.Errorf("busy %.3f, steal %.3f; want 0.45, 0.05", busy, steal)
	}
	if z := parseMachineTimes("intr 1 2"); z != (machineTimes{}) {
		t.Errorf("a file without a cpu line read as %+v", z)
	}
}

// TestAdmissionCounter counts the answers by cause.
func TestAdmissionCounter(t *testing.T) {
	answers := []error{nil, &conn.Refusal{Cause: conn.RefusedOverloaded, RetryAfter: time.Second}, nil,
		&conn.Refusal{Cause: conn.RefusedFull, RetryAfter: time.Second}, errors.New("other"),
		&conn.Refusal{Cause: conn.RefusedOverloaded, RetryAfter: time.Second}}
	i := 0
	c := &admissionCounter{refused: map[string]int{}}
	admit := c.wrap(func() (conn.Admission, error) { err := answers[i]; i++; return nil, err })
	for range answers {
		_, _ = admit()
	}
	n, refused := c.counts()
	if n != 2 || refused["overloaded"] != 2 || refused["full"] != 1 || refused["error"] != 1 || len(refused) != 3 {
		t.Errorf("admitted %d, refused %v", n, refused)
	}
}

// TestSpinScorer: each 20 ms tick costs the configured work, windows
// are scored silence at once, one at a time; Close stops the goroutine.
// In a synctest bubble: the ticks are virtual, the work is real CPU.
// Mutation caught: dropping spinSink.Store lets the compiler empty the
// loop (12-40% of the work's CPU time measured here); the CPU check is
// a floor of 70% of it, in CPU time, which a machine busy with other
// work does not shorten.
func TestSpinScorer(t *testing.T) {
	base := leaktest.Snapshot()
	ns := calibrateSpin()
	synctest.Test(t, func(t *testing.T) {
		m := &costModel{window: 160, every: 20 * time.Millisecond, iters: spinIters(0.05, 20*time.Millisecond, ns)} // 1 ms a tick
		s := m.newScorer()
		if s.WindowSamples() != 160 {
			t.Errorf("window %d", s.WindowSamples())
		}
		const ticks = 50
		c0 := cpuTime()
		time.Sleep(ticks*20*time.Millisecond + 10*time.Millisecond)
		synctest.Wait()
		used := cpuTime() - c0
		if got := m.burned.Load(); got != ticks {
			t.Errorf("burned %d ticks in %d × 20 ms, want %d", got, ticks, ticks)
		}
		want := time.Duration(float64(ticks*m.iters) * ns)
		if used < want*7/10 {
			t.Errorf("%d ticks took %v of CPU, want about %v (%d iterations of %.2f ns)", ticks, used, want, m.iters, ns)
		}
		done := make(chan float32, 1)
		if err := s.Score(make([]int16, 160), func(p float32, err error) {
			if err != nil {
				t.Error(err)
			}
			done <- p
		}); err != nil {
			t.Fatal(err)
		}
		if p := <-done; p != 0 {
			t.Errorf("probability %v, want silence", p)
		}
		// While the goroutine is busy, one window waits and the next is
		// refused (the VAD actor never sends it; a scorer must not block).
		block := make(chan struct{})
		_ = s.Score(nil, func(float32, error) { <-block })
		synctest.Wait()
		_ = s.Score(nil, func(float32, error) {})
		if err := s.Score(nil, func(float32, error) {}); !errors.Is(err, errScorerBusy) {
			t.Errorf("a third window while one is in flight and one waits: %v, want errScorerBusy", err)
		}
		close(block)
		_ = s.Close()
		_ = s.Close()
	})
	if n := leaktest.Snapshot().NewSince(base); n != 0 {
		t.Errorf("%d goroutines left after Close", n)
	}
}
