package admit

import (
	"fmt"
	"sync"
	"syscall"
	"time"
)

// CPUTime reads the process's CPU time (user + system) since it started.
type CPUTime func() (time.Duration, error)

// ProcessCPU is CPUTime from getrusage(RUSAGE_SELF).
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoCPUTime, err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// Sampler feeds a Meter every Period from cpu and live, in one goroutine
// it owns: Stop ends it and waits.
type Sampler struct {
	m       *Meter
	cpu     CPUTime
	live    func() int
	now     func() time.Time
	machine MachineTimes

	// lastBusy and lastTotal are the machine's previous reading
	// (machineRead once there is one).
	lastBusy, lastTotal uint64
	machineRead         bool

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	mu     sync.Mutex
	errors uint64
}

// NewSampler makes a sampler of m; Start runs it. machine, when set,
// also feeds the machine's busy share (Meter.SampleMachine) each period.
func NewSampler(m *Meter, cpu CPUTime, live func() int, machine MachineTimes) *Sampler {
	return &Sampler{m: m, cpu: cpu, live: live, now: time.Now, machine: machine, stop: make(chan struct{})}
}

// Start takes the first sample and starts the ticker goroutine.
func (s *Sampler) Start() {
	s.sample()
	s.wg.Go(func() {
		t := time.NewTicker(s.m.cfg.Period)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	})
}

func (s *Sampler) sample() {
	s.sampleMachine()
	cpu, err := s.cpu()
	if err != nil {
		s.mu.Lock()
		s.errors++
		s.mu.Unlock()
		return
	}
	s.m.Sample(s.now(), cpu, s.live())
}

// sampleMachine gives the meter the machine's busy share since the
// previous reading (none at the first, or when the counters went back).
func (s *Sampler) sampleMachine() {
	if s.machine == nil {
		return
	}
	busy, total, err := s.machine()
	if err != nil {
		s.mu.Lock()
		s.errors++
		s.mu.Unlock()
		return
	}
	if s.machineRead && total > s.lastTotal && busy >= s.lastBusy {
		s.m.SampleMachine(float64(busy-s.lastBusy) / float64(total-s.lastTotal))
	}
	s.lastBusy, s.lastTotal, s.machineRead = busy, total, true
}

// Errors counts the readings that failed.
func (s *Sampler) Errors() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errors
}

// Stop ends the goroutine and waits for it; safe to call twice.
func (s *Sampler) Stop() {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
}
