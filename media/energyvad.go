package media

import (
	"fmt"
	"math"
	"time"
)

// Defaults of EnergyVADConfig, chosen for 20 ms PCM16 frames of telephone
// speech: a start needs two speech frames, a stop a 300 ms pause.
const (
	DefaultVADThreshold  = 500.0
	DefaultVADStartAfter = 40 * time.Millisecond
	DefaultVADStopAfter  = 300 * time.Millisecond
	DefaultVADEdgeMax    = 200 * time.Millisecond
)

// EnergyVADConfig tunes an EnergyVAD. Zero values take the defaults.
type EnergyVADConfig struct {
	// Threshold is the RMS above which a frame counts as speech.
	Threshold float64
	// StartAfter is how much consecutive speech declares a start; it keeps
	// clicks and short noises from starting a turn.
	StartAfter time.Duration
	// StopAfter is how much consecutive non-speech (the hangover) declares a
	// stop; it keeps short pauses inside an utterance from ending it.
	StopAfter time.Duration
	// EdgeThreshold refines the marks, not the decision: frames above it
	// right before a confirmed start, or right after the last speech
	// frame, belong to the utterance (a soft onset or ending: the burst of
	// a "p", a trailing "r"), so the start is backdated over them and the
	// stop dated after them, by at most EdgeMax. Default Threshold/8 (on
	// the speech fixtures every mark then lands within 10 ms of the truth
	// at 10 ms frames); equal to Threshold turns the refinement off.
	EdgeThreshold float64
	// EdgeMax bounds that refinement (default 200 ms), so a noisy line
	// just under the threshold cannot stretch the marks.
	EdgeMax time.Duration
}

// withDefaults fills the zero fields.
func (c EnergyVADConfig) withDefaults() EnergyVADConfig {
	if c.Threshold == 0 {
		c.Threshold = DefaultVADThreshold
	}
	if c.StartAfter == 0 {
		c.StartAfter = DefaultVADStartAfter
	}
	if c.StopAfter == 0 {
		c.StopAfter = DefaultVADStopAfter
	}
	if c.EdgeThreshold == 0 {
		c.EdgeThreshold = c.Threshold / 8
	}
	if c.EdgeMax == 0 {
		c.EdgeMax = DefaultVADEdgeMax
	}
	return c
}

// Validate reports a configuration that cannot work: a threshold that is
// not a finite non-negative number or a negative duration. Zero values are
// valid (they take the defaults).
func (c EnergyVADConfig) Validate() error {
	switch {
	case math.IsNaN(c.Threshold) || math.IsInf(c.Threshold, 0) || c.Threshold < 0:
		return fmt.Errorf("%w: energy vad threshold %v", ErrInvalidConfig, c.Threshold)
	case c.StartAfter < 0:
		return fmt.Errorf("%w: energy vad start after %v", ErrInvalidConfig, c.StartAfter)
	case c.StopAfter < 0:
		return fmt.Errorf("%w: energy vad stop after %v", ErrInvalidConfig, c.StopAfter)
	case math.IsNaN(c.EdgeThreshold) || math.IsInf(c.EdgeThreshold, 0) || c.EdgeThreshold < 0:
		return fmt.Errorf("%w: energy vad edge threshold %v", ErrInvalidConfig, c.EdgeThreshold)
	case c.EdgeThreshold > c.Threshold && c.Threshold != 0:
		return fmt.Errorf("%w: energy vad edge threshold %v above the threshold %v", ErrInvalidConfig, c.EdgeThreshold, c.Threshold)
	case c.EdgeMax < 0:
		return fmt.Errorf("%w: energy vad edge max %v", ErrInvalidConfig, c.EdgeMax)
	}
	return nil
}

// VADEvent is what a frame changed in the speaking state.
type VADEvent int

// The VAD events.
const (
	// VADNone: the frame did not change the state.
	VADNone VADEvent = iota
	// VADStart: the caller started speaking.
	VADStart
	// VADStop: the caller stopped speaking.
	VADStop
)

// String names the event for logs and test failures.
func (e VADEvent) String() string {
	switch e {
	case VADNone:
		return "none"
	case VADStart:
		return "start"
	case VADStop:
		return "stop"
	}
	return fmt.Sprintf("VADEvent(%d)", int(e))
}

// EnergyVAD is a voice activity detector that compares the RMS of each frame
// with a threshold. It is cheap and deterministic, which makes it the VAD of
// the simulator and the fallback when no model VAD is available. It is not
// safe for concurrent use: one vad actor owns it.
type EnergyVAD struct {
	cfg EnergyVADConfig
	// threshold2 and edge2 are the thresholds squared, so Process needs no
	// square root.
	threshold2, edge2 float64
	// edgeStart is where the current run of frames above EdgeThreshold
	// began (edgeOn: such a run is going on) while not speaking;
	// lastEdgeEnd is the end of the frames above it that follow the last
	// speech frame without a gap.
	edgeStart, lastEdgeEnd time.Time
	edgeOn                 bool

	speaking bool
	// run is the speech run before a start is confirmed, or the non-speech
	// run (hangover) while speaking.
	run time.Duration
	// runStart is where the current speech run began (the backdated start).
	runStart time.Time
	// lastSpeechEnd is the end of the last speech frame (the backdated stop).
	lastSpeechEnd time.Time
}

// NewEnergyVAD makes a detector; it fails with ErrInvalidConfig when cfg
// does not validate.
func NewEnergyVAD(cfg EnergyVADConfig) (*EnergyVAD, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &EnergyVAD{cfg: cfg, threshold2: cfg.Threshold * cfg.Threshold, edge2: cfg.EdgeThreshold * cfg.EdgeThreshold}, nil
}

// Process takes one frame whose samples span [start, start+dur) and reports
// whether it started or stopped speech. A start is backdated to the start of
// the first speech frame of the run, a stop to the end of the last speech
// frame, so that turn timing does not include the detector's own delays.
// It does not allocate.
func (v *EnergyVAD) Process(pcm []int16, start time.Time, dur time.Duration) (ev VADEvent, at time.Time) {
	ms := meanSquare(pcm)
	speech, edge := ms > v.threshold2, ms > v.edge2
	end := start.Add(dur)
	if !v.speaking {
		switch {
		case !edge:
			v.edgeOn = false
		case !v.edgeOn:
			v.edgeOn, v.edgeStart = true, start
		}
		if !speech {
			// A run that was not confirmed yet starts over.
			v.run = 0
			return VADNone, time.Time{}
		}
		if v.run == 0 {
			v.runStart = start
		}
		v.run += dur
		v.lastSpeechEnd = end
		if v.run >= v.cfg.StartAfter {
			v.speaking = true
			v.run = 0
			v.lastEdgeEnd = end
			at := v.runStart
			if v.edgeOn && v.edgeStart.Before(at) {
				// A soft onset: back to the start of the frames above the
				// edge threshold before it, within EdgeMax.
				at = later(v.edgeStart, v.runStart.Add(-v.cfg.EdgeMax))
			}
			return VADStart, at
		}
		return VADNone, time.Time{}
	}
	if speech {
		v.run = 0
		v.lastSpeechEnd, v.lastEdgeEnd = end, end
		return VADNone, time.Time{}
	}
	if edge && v.lastEdgeEnd.Equal(start) && end.Sub(v.lastSpeechEnd) <= v.cfg.EdgeMax {
		v.lastEdgeEnd = end // a soft ending goes on
	}
	v.run += dur
	if v.run >= v.cfg.StopAfter {
		v.speaking = false
		v.run = 0
		v.edgeOn = false
		return VADStop, v.lastEdgeEnd
	}
	return VADNone, time.Time{}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// meanSquare is the frame's mean square; an empty frame is silence.
func meanSquare(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum int64
	for _, s := range pcm {
		sum += int64(s) * int64(s)
	}
	return float64(sum) / float64(len(pcm))
}

// Speaking tells whether a start was declared and no stop since.
func (v *EnergyVAD) Speaking() bool { return v.speaking }

// Reset forgets all state, as after a restart of the vad stage: the next
// start needs a full StartAfter run again.
func (v *EnergyVAD) Reset() {
	v.speaking = false
	v.run = 0
	v.runStart = time.Time{}
	v.lastSpeechEnd = time.Time{}
	v.edgeOn = false
	v.edgeStart, v.lastEdgeEnd = time.Time{}, time.Time{}
}
