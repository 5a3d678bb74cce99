package media

import (
	"fmt"
	"math"
	"time"
)

// Defaults of SpeechGateConfig, chosen for Silero VAD's 32 ms windows: a
// start needs two windows of speech (64 ms), a stop the same 300 ms pause
// as the energy VAD.
const (
	DefaultSpeechStartThreshold = 0.5
	// DefaultSpeechThresholdGap is how far below the start threshold the
	// stop threshold lies by default (0.35 for a start at 0.5), as in
	// Silero's own iterator.
	DefaultSpeechThresholdGap = 0.15
	DefaultSpeechMinSpeech    = 64 * time.Millisecond
	DefaultSpeechHangover     = DefaultVADStopAfter
)

// SpeechGateConfig tunes a SpeechGate. Zero values take the defaults.
type SpeechGateConfig struct {
	// StartThreshold is the probability from which a window begins a run
	// of speech (default 0.5).
	StartThreshold float32
	// StopThreshold is the probability from which a window continues a run
	// of speech once one began, or keeps a confirmed speech going; below
	// it a window is silence. Default: StartThreshold - 0.15, or half of
	// StartThreshold if that is not positive. The gap (hysteresis) keeps a
	// probability wobbling around one threshold from toggling the state.
	StopThreshold float32
	// MinSpeech is how much speech a run needs before a start is declared
	// (default 64 ms: two windows); it keeps clicks and coughs from
	// starting a turn.
	MinSpeech time.Duration
	// Hangover is how much consecutive silence declares a stop (default
	// 300 ms); it keeps short pauses inside an utterance from ending it.
	Hangover time.Duration
}

// withDefaults fills the zero fields.
func (c SpeechGateConfig) withDefaults() SpeechGateConfig {
	if c.StartThreshold == 0 {
		c.StartThreshold = DefaultSpeechStartThreshold
	}
	if c.StopThreshold == 0 {
		c.StopThreshold = c.StartThreshold - DefaultSpeechThresholdGap
		if c.StopThreshold <= 0 {
			c.StopThreshold = c.StartThreshold / 2
		}
	}
	if c.MinSpeech == 0 {
		c.MinSpeech = DefaultSpeechMinSpeech
	}
	if c.Hangover == 0 {
		c.Hangover = DefaultSpeechHangover
	}
	return c
}

// Validate reports a configuration that cannot work: a threshold outside
// [0, 1] or NaN, a stop threshold above the start threshold (after the
// defaults), or a negative duration. Zero values are valid (they take the
// defaults).
func (c SpeechGateConfig) Validate() error {
	bad := func(p float32) bool { return math.IsNaN(float64(p)) || p < 0 || p > 1 }
	switch {
	case bad(c.StartThreshold):
		return fmt.Errorf("%w: speech gate start threshold %v", ErrInvalidConfig, c.StartThreshold)
	case bad(c.StopThreshold):
		return fmt.Errorf("%w: speech gate stop threshold %v", ErrInvalidConfig, c.StopThreshold)
	case c.MinSpeech < 0:
		return fmt.Errorf("%w: speech gate min speech %v", ErrInvalidConfig, c.MinSpeech)
	case c.Hangover < 0:
		return fmt.Errorf("%w: speech gate hangover %v", ErrInvalidConfig, c.Hangover)
	}
	if d := c.withDefaults(); d.StopThreshold > d.StartThreshold {
		return fmt.Errorf("%w: speech gate stop threshold %v above start threshold %v",
			ErrInvalidConfig, d.StopThreshold, d.StartThreshold)
	}
	return nil
}

// SpeechGate turns a sequence of per-window speech probabilities (from the
// Silero model) into speech starts and stops, with the same contract as
// EnergyVAD.Process: hysteresis between two thresholds, a minimum speech
// run before a start, a hangover before a stop, and times backdated to the
// speech itself. It is not safe for concurrent use: one vad actor owns it.
type SpeechGate struct {
	cfg SpeechGateConfig

	speaking bool
	// inRun: a run of speech began and is not confirmed yet.
	inRun bool
	// run is the speech of the unconfirmed run, or the silence (hangover)
	// while speaking.
	run time.Duration
	// runStart is where the current speech run began (the backdated start).
	runStart time.Time
	// lastSpeechEnd is the end of the last speech window (the backdated
	// stop).
	lastSpeechEnd time.Time
}

// NewSpeechGate makes a gate; it fails with ErrInvalidConfig when cfg does
// not validate.
func NewSpeechGate(cfg SpeechGateConfig) (*SpeechGate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &SpeechGate{cfg: cfg.withDefaults()}, nil
}

// Config is the configuration in use, with the defaults filled in.
func (g *SpeechGate) Config() SpeechGateConfig { return g.cfg }

// Process takes the speech probability of one window spanning
// [start, start+dur) and reports whether it started or stopped speech. A
// window begins a run when its probability reaches StartThreshold; the run
// continues while windows reach StopThreshold and is confirmed (VADStart,
// dated at the start of its first window) once it lasts MinSpeech. While
// speaking, a window reaching StopThreshold is speech; Hangover of
// consecutive windows below it stop speech (VADStop, dated at the end of
// the last speech window). A NaN probability counts as silence. It does not
// allocate.
func (g *SpeechGate) Process(prob float32, start time.Time, dur time.Duration) (ev VADEvent, at time.Time) {
	if !g.speaking {
		threshold := g.cfg.StartThreshold
		if g.inRun {
			threshold = g.cfg.StopThreshold
		}
		if !(prob >= threshold) { // NaN is silence
			// A run that was not confirmed yet starts over.
			g.inRun, g.run = false, 0
			return VADNone, time.Time{}
		}
		if !g.inRun {
			g.inRun, g.runStart = true, start
		}
		g.run += dur
		g.lastSpeechEnd = start.Add(dur)
		if g.run >= g.cfg.MinSpeech {
			g.speaking, g.inRun, g.run = true, false, 0
			return VADStart, g.runStart
		}
		return VADNone, time.Time{}
	}
	if prob >= g.cfg.StopThreshold {
		g.run = 0
		g.lastSpeechEnd = start.Add(dur)
		return VADNone, time.Time{}
	}
	g.run += dur
	if g.run >= g.cfg.Hangover {
		g.speaking, g.run = false, 0
		return VADStop, g.lastSpeechEnd
	}
	return VADNone, time.Time{}
}

// Speaking tells whether a start was declared and no stop since.
func (g *SpeechGate) Speaking() bool { return g.speaking }

// Reset forgets all state, as after a restart of the vad stage: the next
// start needs a full MinSpeech run again.
func (g *SpeechGate) Reset() {
	g.speaking, g.inRun, g.run = false, false, 0
	g.runStart, g.lastSpeechEnd = time.Time{}, time.Time{}
}
