package chaostest

import (
	"time"

	"github.com/brisvox/brisvox/messages"
)

// The caller's voice: a 200 Hz square wave far above the energy VAD's and
// the mock STT's thresholds, so speech and silence are never ambiguous and
// the VAD's boundaries are exact to the frame.
const (
	speechToneHz    = 200
	speechAmplitude = 8000
)

// step is a part of a caller's script: d of speech saying text, or of
// silence (text "").
type step struct {
	text string
	d    time.Duration
}

// script is what a caller says and when, in whole 20 ms frames.
type script struct {
	steps []step
	// ends holds each step's end, in frames from the call's start.
	ends []int
}

func (s *script) add(text string, d time.Duration) *script {
	n := max(1, int((d+messages.FrameDuration/2)/messages.FrameDuration))
	end := n
	if len(s.ends) > 0 {
		end += s.ends[len(s.ends)-1]
	}
	s.steps = append(s.steps, step{text: text, d: time.Duration(n) * messages.FrameDuration})
	s.ends = append(s.ends, end)
	return s
}

func (s *script) speak(text string, d time.Duration) *script { return s.add(text, d) }
func (s *script) silence(d time.Duration) *script            { return s.add("", d) }

// frames is the script's length in frames.
func (s *script) frames() int {
	if len(s.ends) == 0 {
		return 0
	}
	return s.ends[len(s.ends)-1]
}

// duration is the script's length.
func (s *script) duration() time.Duration {
	return time.Duration(s.frames()) * messages.FrameDuration
}

// utterances are the texts spoken, in order: the mock STT's script.
func (s *script) utterances() []string {
	var out []string
	for _, st := range s.steps {
		if st.text != "" {
			out = append(out, st.text)
		}
	}
	return out
}

// fill writes frame i at rate Hz into pcm (rate/50 samples): the tone in
// speech, zeros in silence and past the end. The wave's phase runs on
// from the call's start.
func (s *script) fill(i, rate int, pcm []int16) {
	speech := false
	for k, end := range s.ends {
		if i < end {
			speech = s.steps[k].text != ""
			break
		}
	}
	if !speech {
		clear(pcm)
		return
	}
	first := int64(i) * int64(rate/50)
	for j := range pcm {
		if (first+int64(j))*2*speechToneHz/int64(rate)%2 == 0 {
			pcm[j] = speechAmplitude
		} else {
			pcm[j] = -speechAmplitude
		}
	}
}
