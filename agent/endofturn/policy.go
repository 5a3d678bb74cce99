package endofturn

import (
	"fmt"
	"math"
	"time"
)

// Policy defaults.
const (
	DefaultMinDelay  = 0
	DefaultMaxDelay  = 1500 * time.Millisecond
	DefaultThreshold = 0.5
)

// PolicyConfig configures the adaptive end-of-turn policy. Zero fields take
// the defaults.
type PolicyConfig struct {
	// MinDelay is the silence after the stop before a turn the model is
	// confident about ends (p >= Threshold). 0 (the default) ends it at the
	// stop itself.
	MinDelay time.Duration
	// MaxDelay is the longest silence awaited: the turn ends this long after
	// the stop whatever the model says (default 1.5 s). It must not be below
	// MinDelay.
	MaxDelay time.Duration
	// Threshold is the probability from which the turn counts as complete,
	// in (0, 1] (default 0.5).
	Threshold float32
	// Recheck, when positive, is how often the model should be asked again
	// while the policy waits (with the audio grown by the silence since);
	// Decision.RecheckAt says when. 0 (the default) asks once per stop.
	Recheck time.Duration
}

// withDefaults fills the zero fields.
func (c PolicyConfig) withDefaults() PolicyConfig {
	if c.MaxDelay == 0 {
		c.MaxDelay = max(DefaultMaxDelay, c.MinDelay)
	}
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	return c
}

// Validate reports a bad configuration (after defaults) as ErrInvalidConfig.
func (c PolicyConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.MinDelay < 0:
		return fmt.Errorf("%w: MinDelay %v is negative", ErrInvalidConfig, c.MinDelay)
	case c.MaxDelay < c.MinDelay:
		return fmt.Errorf("%w: MaxDelay %v is below MinDelay %v", ErrInvalidConfig, c.MaxDelay, c.MinDelay)
	case !(c.Threshold > 0 && c.Threshold <= 1): // also rejects NaN
		return fmt.Errorf("%w: Threshold %v is outside (0, 1]", ErrInvalidConfig, c.Threshold)
	case c.Recheck < 0:
		return fmt.Errorf("%w: Recheck %v is negative", ErrInvalidConfig, c.Recheck)
	}
	return nil
}

// Decision is what the policy expects after an event.
type Decision struct {
	// Waiting is true while a stop awaits its end; the fields below are
	// meaningful only then.
	Waiting bool
	// EndAt is when the turn ends unless speech resumes: call Due then.
	EndAt time.Time
	// RecheckAt, when not zero, is when to ask the model again and report
	// the answer with OnEstimate. It is zero when Recheck is off or the next
	// check would not come before EndAt.
	RecheckAt time.Time
}

// Policy decides when a turn ends after the voice activity detector reports
// a stop (the silence began at some time T).
//
// The model's probability p that the turn is complete sets the wait:
//
//	p >= Threshold: the turn ends at T + MinDelay;
//	p <  Threshold: at T + MinDelay + (MaxDelay-MinDelay) * (Threshold-p)/Threshold,
//	                the added part rounded to the millisecond.
//
// The wait grows linearly from MinDelay (p just below the threshold; the
// rule is continuous there, so a small change in p never makes a jump) to
// MaxDelay (p = 0). A p above 1 counts as 1; below 0 or NaN (no estimate, a
// failed model run) counts as 0, that is MaxDelay, the behaviour of a plain
// VAD endpoint. With Recheck set, a new estimate p' at time now (OnEstimate)
// moves the end to max(now, T + wait(p')): the latest estimate wins, never
// beyond T + MaxDelay, never in the past.
//
// Speech resuming (OnSpeech) cancels the wait. Due reports the end exactly
// once. The policy is a pure state machine: it reads no clock and starts no
// goroutine; all times come from the caller, so it is deterministic and the
// turn actor owns the timers. It is not safe for concurrent use.
type Policy struct {
	cfg     PolicyConfig
	waiting bool
	stopAt  time.Time
	endAt   time.Time
	checkAt time.Time
}

// NewPolicy returns an idle policy.
func NewPolicy(cfg PolicyConfig) (*Policy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Policy{cfg: cfg.withDefaults()}, nil
}

// Config returns the configuration in force, defaults filled in.
func (p *Policy) Config() PolicyConfig { return p.cfg }

// Delay is the wait after the stop that probability prob earns (see Policy).
func (p *Policy) Delay(prob float32) time.Duration {
	c := p.cfg
	switch {
	case prob >= c.Threshold:
		return c.MinDelay
	case !(prob > 0): // 0, negative, NaN
		return c.MaxDelay
	}
	frac := float64(c.Threshold-prob) / float64(c.Threshold)
	span := float64(c.MaxDelay - c.MinDelay)
	// Whole milliseconds: float32 probabilities would otherwise put the end
	// a few nanoseconds off the round figure a reader expects.
	return c.MinDelay + time.Duration(math.Round(span*frac/float64(time.Millisecond)))*time.Millisecond
}

// OnStop starts a wait: the silence began at at, and prob is the model's
// estimate on the audio up to then. Any earlier wait is replaced.
func (p *Policy) OnStop(at time.Time, prob float32) Decision {
	p.waiting = true
	p.stopAt = at
	p.endAt = at.Add(p.Delay(prob))
	p.planCheck(at)
	return p.Decision()
}

// OnEstimate reports a new estimate made at now while waiting (see
// Recheck). It is ignored when the policy is not waiting, for instance when
// speech resumed while the model ran.
func (p *Policy) OnEstimate(now time.Time, prob float32) Decision {
	if !p.waiting {
		return Decision{}
	}
	end := p.stopAt.Add(p.Delay(prob))
	if end.Before(now) {
		end = now
	}
	p.endAt = end
	p.planCheck(now)
	return p.Decision()
}

// planCheck sets the next recheck after now, if one comes before the end.
func (p *Policy) planCheck(now time.Time) {
	p.checkAt = time.Time{}
	if p.cfg.Recheck > 0 {
		if next := now.Add(p.cfg.Recheck); next.Before(p.endAt) {
			p.checkAt = next
		}
	}
}

// OnSpeech reports that speech resumed: the wait, if any, is cancelled. It
// returns whether one was.
func (p *Policy) OnSpeech() bool {
	was := p.waiting
	p.waiting = false
	p.checkAt = time.Time{}
	return was
}

// Due reports, exactly once per wait, that the turn has ended: true when the
// policy is waiting and now is not before the end. The policy is then idle.
func (p *Policy) Due(now time.Time) bool {
	if !p.waiting || now.Before(p.endAt) {
		return false
	}
	p.waiting = false
	p.checkAt = time.Time{}
	return true
}

// Decision returns the current expectation.
func (p *Policy) Decision() Decision {
	if !p.waiting {
		return Decision{}
	}
	return Decision{Waiting: true, EndAt: p.endAt, RecheckAt: p.checkAt}
}
