package serve

import (
	"errors"
	"fmt"

	"github.com/brisvox/brisvox/cmd/internal/admit"
	"github.com/brisvox/brisvox/media/conn"
)

// overloadedLocked is the measured admission's refusal of one more call,
// or nil (no meter, or the estimate after it stays under the ceiling).
// It runs after the call limit and draining checks, under s.mu, so the
// calls it counts (reserved + live) are the ones the limit counts.
func (s *Server) overloadedLocked() *conn.Refusal {
	m := s.cfg.Meter
	if m == nil {
		return nil
	}
	ok, load := m.Decide(s.reserved + len(s.live))
	if ok {
		return nil
	}
	s.stats.Inc("refused_overloaded")
	s.metrics.refused.WithLabelValues(string(conn.RefusedOverloaded)).Inc()
	c := m.Config()
	return &conn.Refusal{Cause: conn.RefusedOverloaded,
		Detail:     fmt.Sprintf("estimated load %.0f%% of %g cores with one more call, ceiling %.0f%%", 100*load, c.Cores, 100*c.Ceiling),
		RetryAfter: s.cfg.RetryAfter}
}

// startMeter starts the sampler that feeds the meter while Serve runs
// (nil without a meter); Serve stops it.
func (s *Server) startMeter() *admit.Sampler {
	if s.cfg.Meter == nil {
		return nil
	}
	sm := admit.NewSampler(s.cfg.Meter, s.cfg.CPUTime, func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.live)
	}, s.cfg.MachineTimes)
	sm.Start()
	return sm
}

// admissionBody is the meter's part of /readyz.
type admissionBody struct {
	admit.Estimate
	// Load is the estimated share of the cores the live calls use.
	Load float64 `json:"load"`
}

// meterMetrics publishes the meter's figures on /metrics (read at each
// scrape).
func (s *Server) meterMetrics() error {
	m := s.cfg.Meter
	if m == nil {
		return nil
	}
	// Each registered by name, so the docs' check sees the five.
	load := func() float64 {
		s.mu.Lock()
		n := len(s.live)
		s.mu.Unlock()
		return m.Estimate().Load(n)
	}
	return errors.Join(
		s.GaugeFunc("brisvox_admission_per_call_cores", "Cost of one call in cores, as admission uses it (measured, or the prior until enough samples).", nil,
			func() float64 { return m.Estimate().PerCall }),
		s.GaugeFunc("brisvox_admission_baseline_cores", "Cores the process uses with no call live (smoothed).", nil,
			func() float64 { return m.Estimate().Baseline }),
		s.GaugeFunc("brisvox_admission_load", "Estimated share of the cores used: the live calls and the baseline, or the machine's busy share when higher.", nil, load),
		s.GaugeFunc("brisvox_admission_machine_busy", "Busy share of the machine's CPUs, every process's (smoothed, from /proc/stat).", nil,
			func() float64 { return m.Estimate().Machine }),
		s.GaugeFunc("brisvox_admission_ceiling", "Share of the cores admission keeps the estimate under.", nil,
			func() float64 { return m.Config().Ceiling }),
	)
}
