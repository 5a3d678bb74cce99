package admit

import (
	"errors"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
)

// load drives a meter with a synthetic load: each 1 s interval uses
// baseline + perCall·calls cores, calls ramping linearly from the last
// interval's count to live (their mean, as the meter assumes).
type load struct {
	m    *Meter
	at   time.Time
	cpu  time.Duration
	live int
}

func newLoad(t *testing.T, cfg Config) *load {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := &load{m: m, at: time.Unix(1000, 0)}
	m.Sample(l.at, 0, 0)
	return l
}

func (l *load) run(n, live int, baseline, perCall float64) {
	for range n {
		l.at = l.at.Add(time.Second)
		calls := float64(l.live+live) / 2
		l.cpu += time.Duration((baseline + perCall*calls) * float64(time.Second))
		l.live = live
		l.m.Sample(l.at, l.cpu, live)
	}
}

// TestDecideFromMeasuredCost pins the decision of the example: 2
// cores, 4% of a core per call measured, ceiling 75%: (0.04·37)/2 = 0.74
// admits the 37th call, (0.04·38)/2 = 0.76 refuses the 38th.
func TestDecideFromMeasuredCost(t *testing.T) {
	l := newLoad(t, Config{Cores: 2})
	l.run(10, 0, 0, 0)
	l.run(10, 20, 0, 0.04)
	e := l.m.Estimate()
	if math.Abs(e.PerCall-0.04) > 1e-9 || e.Samples != 10 {
		t.Fatalf("estimate %+v, want 0.04 cores per call over 10 samples", e)
	}
	for _, c := range []struct {
		live int
		ok   bool
		load float64
	}{
		{0, true, 0.02},
		{20, true, 0.42},
		{36, true, 0.74}, // the 37th call
		{37, false, 0.76},
		{100, false, 2.02},
	} {
		ok, load := l.m.Decide(c.live)
		if ok != c.ok || math.Abs(load-c.load) > 1e-9 {
			t.Errorf("Decide(%d) = %v, %.4f; want %v, %.4f", c.live, ok, load, c.ok, c.load)
		}
	}
}

// TestBaselineIsNotCharged: the idle process's use (the collector, the
// HTTP server) is learnt apart and not counted per call. Mutation caught:
// per-call cost taken from the whole use (without subtracting the
// baseline) reads 0.04+0.2/20 = 0.05 and fails.
func TestBaselineIsNotCharged(t *testing.T) {
	l := newLoad(t, Config{Cores: 2})
	l.run(20, 0, 0.2, 0)
	l.run(20, 20, 0.2, 0.04)
	e := l.m.Estimate()
	if math.Abs(e.Baseline-0.2) > 1e-9 || math.Abs(e.PerCall-0.04) > 1e-9 {
		t.Fatalf("estimate %+v, want baseline 0.2, 0.04 per call", e)
	}
	// (0.2 + 0.04·32)/2 = 0.74; 33 calls: 0.76.
	if ok, _ := l.m.Decide(31); !ok {
		t.Error("the 32nd call refused")
	}
	if ok, _ := l.m.Decide(32); ok {
		t.Error("the 33rd call admitted")
	}
}

// TestPriorHoldsUntilMeasured: a node that just started knows no cost:
// the prior bounds a burst until MinSamples intervals with calls were
// measured, then a lower measured cost wins. Mutation caught: dropping
// the floor (PerCall = measured from the first sample) admits the burst
// on a cost measured over one quiet interval.
func TestPriorHoldsUntilMeasured(t *testing.T) {
	l := newLoad(t, Config{Cores: 2, Prior: 0.1, MinSamples: 5})
	if ok, load := l.m.Decide(14); !ok || math.Abs(load-0.75) > 1e-9 {
		t.Errorf("no data: Decide(14) = %v, %.3f; want admitted at 0.75 on the prior", ok, load)
	}
	if ok, _ := l.m.Decide(15); ok {
		t.Error("no data: the 16th call admitted on the prior of 0.1 cores")
	}
	l.run(4, 2, 0, 0.01)
	if e := l.m.Estimate(); e.PerCall != 0.1 {
		t.Errorf("after 4 samples PerCall %v, want the prior 0.1", e.PerCall)
	}
	l.run(1, 2, 0, 0.01)
	if e := l.m.Estimate(); math.Abs(e.PerCall-0.01) > 1e-9 {
		t.Errorf("after 5 samples PerCall %v, want the measured 0.01", e.PerCall)
	}
	// A measured cost above the prior is used at once.
	h := newLoad(t, Config{Cores: 2, Prior: 0.01, MinSamples: 5})
	h.run(1, 10, 0, 0.2) // 0 to 10 calls: 5 on average
	if e := h.m.Estimate(); math.Abs(e.PerCall-0.2) > 1e-9 {
		t.Errorf("PerCall %v after one costly interval, want 0.2 (above the prior)", e.PerCall)
	}
}

// TestFollowsALoadStep: calls that grow costlier (a heavier agent, a
// neighbour on the machine) lower the admission within a few intervals.
func TestFollowsALoadStep(t *testing.T) {
	l := newLoad(t, Config{Cores: 2, Alpha: 0.3})
	l.run(10, 10, 0, 0.02)
	if ok, _ := l.m.Decide(60); !ok {
		t.Fatal("at 0.02 per call the 61st call was refused ((0.02·61)/2 = 0.61)")
	}
	l.run(10, 10, 0, 0.06) // cost triples
	e := l.m.Estimate()
	if e.PerCall < 0.058 || e.PerCall > 0.06 { // 0.02 + 0.04·(1 − 0.7¹⁰) = 0.0589
		t.Fatalf("PerCall %v ten intervals after the step, want about 0.06", e.PerCall)
	}
	if ok, _ := l.m.Decide(60); ok {
		t.Error("at 0.06 per call the 61st call was admitted")
	}
	if ok, _ := l.m.Decide(23); !ok {
		t.Error("at 0.06 per call the 24th call was refused ((0.06·24)/2 = 0.72)")
	}
}

// TestCallsOfAnIntervalAreItsMean: calls that come in during an interval
// count half. Mutation caught: counting the live calls at the interval's
// end only (20) reads the cost of 10 calls as 0.02 each instead of 0.04.
func TestCallsOfAnIntervalAreItsMean(t *testing.T) {
	m, _ := New(Config{Cores: 2})
	at := time.Unix(0, 0)
	m.Sample(at, 0, 0)
	m.Sample(at.Add(time.Second), 400*time.Millisecond, 20) // 0 then 20 calls: 10 on average, 0.4 cores
	if e := m.Estimate(); math.Abs(e.Measured-0.04) > 1e-9 {
		t.Errorf("measured %v, want 0.4 cores / 10 calls = 0.04", e.Measured)
	}
}

// TestUnreliableIntervalsSkipped: an interval too short to measure and a
// CPU time that went backwards teach nothing.
func TestUnreliableIntervalsSkipped(t *testing.T) {
	m, _ := New(Config{Cores: 2})
	at := time.Unix(0, 0)
	m.Sample(at, time.Second, 5)
	m.Sample(at.Add(time.Millisecond), 2*time.Second, 5) // 1000 cores over 1 ms: too short
	m.Sample(at.Add(time.Second), 500*time.Millisecond, 5)
	if e := m.Estimate(); e.Samples != 0 {
		t.Errorf("samples %d after a short interval and a backwards reading, want 0", e.Samples)
	}
	m.Sample(at.Add(2*time.Second), 700*time.Millisecond, 5)
	if e := m.Estimate(); e.Samples != 1 || math.Abs(e.Measured-0.04) > 1e-9 {
		t.Errorf("estimate %+v, want one sample of 0.2/5 = 0.04", e)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Cores: -1},
		{Cores: math.Inf(1)},
		{Cores: 2, Ceiling: 1.5},
		{Cores: 2, Ceiling: -0.1},
		{Cores: 2, Prior: 3},
		{Cores: 2, Alpha: 2},
		{Cores: 2, MinSamples: -1},
		{Cores: 2, Period: time.Millisecond},
	} {
		if _, err := New(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", c, err)
		}
	}
	m, err := New(Config{Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Config(); c.Ceiling != DefaultCeiling || c.Prior != DefaultPrior || c.Period != DefaultPeriod {
		t.Errorf("defaults %+v", c)
	}
}

// TestSamplerFeedsTheMeter: in virtual time, a sampler on a synthetic CPU
// clock measures its cost per call, counts failed readings, and Stop
// leaves no goroutine.
func TestSamplerFeedsTheMeter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		m, _ := New(Config{Cores: 2, Period: time.Second})
		start := time.Now()
		var fail atomic.Bool
		cpu := func() (time.Duration, error) {
			if fail.Load() {
				return 0, ErrNoCPUTime
			}
			// 10 calls at 0.05 cores each since start.
			return time.Duration(0.5 * float64(time.Since(start))), nil
		}
		s := NewSampler(m, cpu, func() int { return 10 }, nil)
		s.Start()
		time.Sleep(10*time.Second + time.Millisecond)
		fail.Store(true)
		time.Sleep(2 * time.Second)
		s.Stop()
		s.Stop()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after Stop", n)
		}
		e := m.Estimate()
		if e.Samples != 10 || math.Abs(e.Measured-0.05) > 1e-9 {
			t.Errorf("estimate %+v, want 10 samples of 0.05", e)
		}
		if s.Errors() != 2 {
			t.Errorf("errors %d, want 2", s.Errors())
		}
	})
}

// TestProcessCPUReadsRealWork: the getrusage reading grows with the CPU
// a goroutine of the test burns. A real-time test on a machine other
// tests share: it burns until the reading grew by 50 ms (a fixed amount
// of this process's CPU, whatever the load) and fails only when 10 s of
// wall time did not get there, which a reading that does not follow real
// work (mutation: ProcessCPU returning a constant) never does.
func TestProcessCPUReadsRealWork(t *testing.T) {
	if testing.Short() {
		t.Skip("burns CPU in real time")
	}
	before, err := ProcessCPU()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	var d time.Duration
	for time.Now().Before(deadline) {
		for range 1_000_000 {
			x++
		}
		after, err := ProcessCPU()
		if err != nil {
			t.Fatal(err)
		}
		if d = after - before; d >= 50*time.Millisecond {
			break
		}
	}
	runtime.KeepAlive(x)
	if d < 50*time.Millisecond {
		t.Errorf("CPU time grew by %v over 10 s of a busy loop, want at least 50 ms", d)
	}
}
