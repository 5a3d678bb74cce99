package admit

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// TestParseProcStat: the aggregate cpu line, with and without steal;
// anything else is ErrNoMachineTime, never a panic.
func TestParseProcStat(t *testing.T) {
	for _, c := range []struct {
		name        string
		in          string
		busy, total uint64
		bad         bool
	}{
		{"linux 5", "cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 50 2 25 400 10 1 1 5 0 0\n", 170, 990, false},
		{"no steal", "cpu 100 5 50 800 20 3 2\n", 160, 980, false},
		{"not the cpu line", "intr 1 2 3 4 5 6 7 8\n", 0, 0, true},
		{"cpu0 first", "cpu0 1 2 3 4 5 6 7 8\n", 0, 0, true},
		{"short", "cpu 1 2 3\n", 0, 0, true},
		{"non-number", "cpu 1 2 x 4 5 6 7 8\n", 0, 0, true},
		{"empty", "", 0, 0, true},
		{"overflow", "cpu 18446744073709551615 1 0 0 0 0 0 0\n", 0, 0, true},
	} {
		busy, total, err := parseProcStat([]byte(c.in))
		if c.bad {
			if !errors.Is(err, ErrNoMachineTime) {
				t.Errorf("%s: %v, want ErrNoMachineTime", c.name, err)
			}
			continue
		}
		if err != nil || busy != c.busy || total != c.total {
			t.Errorf("%s: %d/%d %v, want %d/%d", c.name, busy, total, err, c.busy, c.total)
		}
	}
	if busy, total, err := ProcStat(); err != nil || total == 0 || busy > total {
		t.Errorf("this machine's /proc/stat: %d/%d %v", busy, total, err)
	}
}

// FuzzParseProcStat: any bytes give a reading with busy <= total or an
// error, never a panic.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("cpu  100 5 50 800 20 3 2 10 0 0\n"))
	f.Add([]byte("cpu 1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		busy, total, err := parseProcStat(data)
		if err == nil && busy > total {
			t.Fatalf("busy %d > total %d", busy, total)
		}
	})
}

// TestMachineBusyRefuses: the node's own estimate leaves room (10 calls
// at 0.04 cores on 2 cores: 22%), but other processes keep the machine
// 80% busy: one more call would take it to 82%, over the 75% ceiling, so
// it is refused; when the machine is quiet again (busy share back to the
// node's own) it is admitted. Mutation caught: Decide without the
// machine term admits at 82%.
func TestMachineBusyRefuses(t *testing.T) {
	l := newLoad(t, Config{Cores: 2, Alpha: 1})
	l.run(10, 10, 0, 0.04)
	if ok, load := l.m.Decide(10); !ok || math.Abs(load-0.22) > 1e-9 {
		t.Fatalf("quiet machine: %v %.3f, want admitted at 0.22", ok, load)
	}
	l.m.SampleMachine(0.8)
	if ok, load := l.m.Decide(10); ok || math.Abs(load-0.82) > 1e-9 {
		t.Errorf("machine 80%% busy: %v %.3f, want refused at 0.82", ok, load)
	}
	l.m.SampleMachine(0.2)
	if ok, _ := l.m.Decide(10); !ok {
		t.Error("the machine quiet again: refused")
	}
	if e := l.m.Estimate(); e.Load(10) < 0.2 {
		t.Errorf("Load(10) = %.3f with the machine 20%% busy", e.Load(10))
	}
}

// TestStarvedIntervalsNotLearnt: while the machine has no idle CPU the
// calls get less than they need; those intervals do not lower the cost
// per call. Mutation caught: learning them (the cost falls from 0.1 to
// the starved 0.03 and more calls would be admitted).
func TestStarvedIntervalsNotLearnt(t *testing.T) {
	l := newLoad(t, Config{Cores: 2})
	l.m.SampleMachine(0.5)
	l.run(10, 10, 0, 0.1)
	l.m.SampleMachine(1)
	l.run(10, 10, 0, 0.03)
	e := l.m.Estimate()
	if math.Abs(e.PerCall-0.1) > 1e-6 || e.Starved != 10 {
		t.Errorf("estimate %+v, want 0.1 per call kept and 10 starved intervals", e)
	}
}

// TestSamplerReadsTheMachine: the sampler gives the meter the busy share
// between two readings of the machine's times, and counts a failed one.
func TestSamplerReadsTheMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, _ := New(Config{Cores: 2, Period: time.Second, Alpha: 1})
		var busy, total uint64
		machine := func() (uint64, uint64, error) {
			busy, total = busy+60, total+100 // 60% busy
			return busy, total, nil
		}
		s := NewSampler(m, func() (time.Duration, error) { return 0, nil }, func() int { return 0 }, machine)
		s.Start()
		time.Sleep(3*time.Second + time.Millisecond)
		s.Stop()
		if e := m.Estimate(); math.Abs(e.Machine-0.6) > 1e-9 {
			t.Errorf("machine busy %.3f, want 0.6", e.Machine)
		}
	})
}
