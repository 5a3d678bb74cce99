package admit

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultCeiling    = 0.75
	DefaultPrior      = 0.02 // 2% of a core per call
	DefaultAlpha      = 0.3
	DefaultMinSamples = 5
	DefaultPeriod     = time.Second
)

// Config tunes a Meter. The zero value of a field takes its default.
type Config struct {
	// Cores is the node's capacity in cores (> 0; default: GOMAXPROCS,
	// given by the caller).
	Cores float64
	// Ceiling is the share of Cores the estimate may reach with the new
	// call, in (0, 1]. Default 0.75.
	Ceiling float64
	// Prior is the cost per call, in cores, assumed until MinSamples
	// intervals with calls were measured (> 0, < Cores). Default 0.02.
	Prior float64
	// Alpha is the weight of a new interval in the smoothed figures, in
	// (0, 1]. Default 0.3.
	Alpha float64
	// MinSamples is how many intervals with calls the measured cost
	// needs before it may go under Prior. Default 5.
	MinSamples int
	// Period is the sampling interval of a Sampler. Default 1 s.
	Period time.Duration
}

func (c Config) withDefaults() Config {
	if c.Ceiling == 0 {
		c.Ceiling = DefaultCeiling
	}
	if c.Prior == 0 {
		c.Prior = DefaultPrior
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.MinSamples == 0 {
		c.MinSamples = DefaultMinSamples
	}
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	return c
}

// Validate checks a config after defaults.
func (c Config) Validate() error {
	switch {
	case !(c.Cores > 0) || math.IsInf(c.Cores, 0):
		return fmt.Errorf("%w: cores %v: want > 0", ErrInvalidConfig, c.Cores)
	case !(c.Ceiling > 0 && c.Ceiling <= 1):
		return fmt.Errorf("%w: ceiling %v: want a share of the cores in (0, 1]", ErrInvalidConfig, c.Ceiling)
	case !(c.Prior > 0 && c.Prior < c.Cores):
		return fmt.Errorf("%w: prior cost per call %v cores: want > 0 and < the cores", ErrInvalidConfig, c.Prior)
	case !(c.Alpha > 0 && c.Alpha <= 1):
		return fmt.Errorf("%w: alpha %v: want (0, 1]", ErrInvalidConfig, c.Alpha)
	case c.MinSamples < 1:
		return fmt.Errorf("%w: min samples %d: want >= 1", ErrInvalidConfig, c.MinSamples)
	case c.Period < 10*time.Millisecond:
		return fmt.Errorf("%w: period %v: want >= 10ms", ErrInvalidConfig, c.Period)
	}
	return nil
}

// Estimate is what the meter knows, in cores.
type Estimate struct {
	// Baseline is the smoothed use with no call live.
	Baseline float64 `json:"baseline_cores"`
	// PerCall is the cost per call Decide uses (at least Prior until
	// Samples reaches MinSamples).
	PerCall float64 `json:"per_call_cores"`
	// Measured is the smoothed measured cost per call (0 before any
	// interval with calls).
	Measured float64 `json:"measured_per_call_cores"`
	// Samples counts the intervals with calls.
	Samples int `json:"samples"`
	// Cores and Ceiling are the config's.
	Cores   float64 `json:"cores"`
	Ceiling float64 `json:"ceiling"`
	// Machine is the smoothed busy share of the machine's CPUs, every
	// process's (SampleMachine; 0 while none was read): the node's free
	// capacity is what the others leave.
	Machine float64 `json:"machine_busy"`
	// Starved counts the intervals with calls not learnt from: the
	// machine had no idle time, so the calls got less CPU than they
	// needed and would look cheaper than they are.
	Starved int `json:"starved_samples"`
}

// Load is the estimated share of the cores with calls live: the node's
// own estimate, or the machine's busy share when that is higher (other
// processes take cores too).
func (e Estimate) Load(calls int) float64 {
	return max((e.Baseline+e.PerCall*float64(calls))/e.Cores, e.Machine)
}

// After is the estimated share of the cores once one more call joins
// calls: the node's estimate with calls+1, or the machine's busy share
// plus one call's, whichever is higher.
func (e Estimate) After(calls int) float64 {
	return max((e.Baseline+e.PerCall*float64(calls+1))/e.Cores, e.Machine+e.PerCall/e.Cores)
}

// Meter learns the node's cost per call; safe for concurrent use.
type Meter struct {
	cfg Config

	mu       sync.Mutex
	started  bool
	lastAt   time.Time
	lastCPU  time.Duration
	lastLive int
	baseline float64
	baseSeen bool
	measured float64
	samples  int
	// machine is the smoothed busy share of the machine (SampleMachine),
	// machineSeen once read; starved counts the intervals not learnt.
	machine     float64
	machineSeen bool
	starved     int
	lastBusy    float64 // the newest busy share, unsmoothed
}

// starvedBusy is the machine's busy share at which an interval is not
// learnt from: with no idle CPU the calls were starved.
const starvedBusy = 0.95

// SampleMachine takes the machine's busy share of its CPUs over the
// last period (every process's, 0..1), smoothed like the cost per call.
// It is read before Sample in each period, so a starved interval is
// known when the process's reading comes.
func (m *Meter) SampleMachine(busy float64) {
	if math.IsNaN(busy) {
		return
	}
	busy = min(max(busy, 0), 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.machineSeen {
		m.machine, m.machineSeen = busy, true
		m.lastBusy = busy
		return
	}
	m.lastBusy = busy
	m.machine += m.cfg.Alpha * (busy - m.machine)
}

// New makes a Meter.
func New(cfg Config) (*Meter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Meter{cfg: cfg}, nil
}

// Config is the meter's config, defaults applied.
func (m *Meter) Config() Config { return m.cfg }

// Sample feeds the process's CPU time (user + system, since start) and
// the live call count at now. The first sample only sets the start; an
// interval shorter than a tenth of the Period, or a CPU time that went
// backwards, is skipped (it says nothing reliable).
func (m *Meter) Sample(now time.Time, cpu time.Duration, live int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		m.started, m.lastAt, m.lastCPU, m.lastLive = true, now, cpu, live
		return
	}
	dt := now.Sub(m.lastAt)
	if dt < m.cfg.Period/10 || cpu < m.lastCPU {
		if cpu < m.lastCPU {
			m.lastAt, m.lastCPU, m.lastLive = now, cpu, live
		}
		return
	}
	used := float64(cpu-m.lastCPU) / float64(dt)
	// The calls of the interval: the mean of its two ends (a call that
	// started or ended in it counted half).
	calls := float64(m.lastLive+live) / 2
	m.lastAt, m.lastCPU, m.lastLive = now, cpu, live
	a := m.cfg.Alpha
	if calls == 0 {
		if !m.baseSeen {
			m.baseline, m.baseSeen = used, true
		} else {
			m.baseline += a * (used - m.baseline)
		}
		return
	}
	if m.machineSeen && m.lastBusy >= starvedBusy {
		// No idle CPU on the machine: what the calls got is not what
		// they need. Learning it would lower the cost as they starve.
		m.starved++
		return
	}
	per := max(0, used-m.baseline) / calls
	if m.samples == 0 {
		m.measured = per
	} else {
		m.measured += a * (per - m.measured)
	}
	m.samples++
}

// Estimate is the meter's current figures.
func (m *Meter) Estimate() Estimate {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.estimateLocked()
}

func (m *Meter) estimateLocked() Estimate {
	per := m.measured
	if m.samples < m.cfg.MinSamples {
		per = max(per, m.cfg.Prior)
	}
	return Estimate{Baseline: m.baseline, PerCall: per, Measured: m.measured, Samples: m.samples,
		Cores: m.cfg.Cores, Ceiling: m.cfg.Ceiling, Machine: m.machine, Starved: m.starved}
}

// Decide says whether one more call may come in while calls are live or
// reserved, and the estimated load (a share of the cores) after it.
func (m *Meter) Decide(calls int) (ok bool, load float64) {
	e := m.Estimate()
	load = e.After(calls)
	return load <= e.Ceiling, load
}
