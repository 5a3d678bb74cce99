package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// Caller audio: a square wave whose RMS (its amplitude) is far above the
// energy VAD's and the mock STT's thresholds, so speech and silence are never
// ambiguous.
const (
	speechToneHz    = 200
	speechAmplitude = 8000
)

// Step is one part of a caller's script: Duration of speech saying Text, or
// Duration of silence.
type Step struct {
	Text     string
	Duration time.Duration
	Speech   bool
}

// Segment is a span of the call, as offsets from the call's start.
type Segment struct {
	Start, End time.Duration
}

// Scenario is a scripted caller: what it says and when, in whole 20 ms
// frames. Build it with NewScenario, Speak and Silence; Steps is for
// reading. Errors of the builder are recorded and returned by Validate, so a
// scenario table can be written as one expression.
type Scenario struct {
	Name  string
	Steps []Step

	// ends holds, per step, the index of the frame after its last frame;
	// FillFrame searches it, so it needs no allocation.
	ends []int
	err  error
}

// NewScenario starts an empty script.
func NewScenario(name string) *Scenario {
	return &Scenario{Name: name}
}

// Speak adds d of speech saying text. d is rounded to whole frames and must
// come to at least one frame; otherwise the step is dropped and Validate
// reports it.
func (s *Scenario) Speak(text string, d time.Duration) *Scenario {
	return s.add(Step{Text: text, Duration: d, Speech: true})
}

// Silence adds d of silence, rounded to whole frames (at least one).
func (s *Scenario) Silence(d time.Duration) *Scenario {
	return s.add(Step{Duration: d})
}

// add rounds the step to frames and records its end frame.
func (s *Scenario) add(st Step) *Scenario {
	n := int((st.Duration + messages.FrameDuration/2) / messages.FrameDuration)
	if st.Duration < 0 || n < 1 {
		s.err = errors.Join(s.err, fmt.Errorf("%w: step %d (%q) lasts %v, less than one %v frame",
			ErrInvalidScenario, len(s.Steps), st.Text, st.Duration, messages.FrameDuration))
		return s
	}
	st.Duration = time.Duration(n) * messages.FrameDuration
	s.Steps = append(s.Steps, st)
	s.ends = append(s.ends, s.FrameCount()+n)
	return s
}

// Validate reports the builder's errors and an empty script.
func (s *Scenario) Validate() error {
	if len(s.Steps) == 0 && s.err == nil {
		return fmt.Errorf("%w: %q has no steps", ErrInvalidScenario, s.Name)
	}
	return s.err
}

// Duration is the script's length.
func (s *Scenario) Duration() time.Duration {
	return time.Duration(s.FrameCount()) * messages.FrameDuration
}

// FrameCount is the script's length in 20 ms frames.
func (s *Scenario) FrameCount() int {
	if len(s.ends) == 0 {
		return 0
	}
	return s.ends[len(s.ends)-1]
}

// Utterances lists the texts of the Speak steps in order: the script of the
// mock STT and the ground truth of transcripts.
func (s *Scenario) Utterances() []string {
	var out []string
	for _, st := range s.Steps {
		if st.Speech {
			out = append(out, st.Text)
		}
	}
	return out
}

// SpeechSegments is the ground truth of the caller's speech: one segment per
// Speak step (adjacent Speak steps stay separate segments).
func (s *Scenario) SpeechSegments() []Segment {
	var out []Segment
	for i, st := range s.Steps {
		if st.Speech {
			end := time.Duration(s.ends[i]) * messages.FrameDuration
			out = append(out, Segment{Start: end - st.Duration, End: end})
		}
	}
	return out
}

// FillFrame writes frame i, the samples of [i*20ms, (i+1)*20ms), at rate Hz
// into pcm (which should hold rate/50 samples) and tells whether it is
// speech. Frames outside the script are silence. The wave's phase runs on
// from the call's start, so frames join without clicks. It does not
// allocate.
func (s *Scenario) FillFrame(i int, rate int, pcm []int16) (speech bool) {
	if i >= 0 && rate > 0 {
		// The step holding frame i is the first whose end is after i.
		step, _ := slices.BinarySearch(s.ends, i+1)
		if step < len(s.ends) {
			speech = s.Steps[step].Speech
		}
	}
	if !speech {
		clear(pcm)
		return false
	}
	first := int64(i) * int64(rate/50)
	for j := range pcm {
		// Half periods of the square wave since the call's start.
		half := (first + int64(j)) * 2 * speechToneHz / int64(rate)
		if half%2 == 0 {
			pcm[j] = speechAmplitude
		} else {
			pcm[j] = -speechAmplitude
		}
	}
	return true
}
