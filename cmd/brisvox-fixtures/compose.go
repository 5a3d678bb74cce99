package main

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// errFixture is wrapped by every refusal to build a fixture.
var errFixture = errors.New("brisvox-fixtures")

// Utterance is one synthesized utterance before layout.
type Utterance struct {
	Language string
	Text     string
	Samples  []int16
}

// Layout is how utterances are laid out in a fixture.
type Layout struct {
	// Rate is the sample rate of the utterances and the fixture.
	Rate int
	// Lead and Trail are the digital silence before the first and after
	// the last utterance.
	Lead, Trail time.Duration
	// Gaps are the digital silences between utterances, used in turn.
	Gaps []time.Duration
	// Threshold is the absolute sample value above which a sample is
	// audio: what lies outside the first and last such sample of an
	// utterance is the synthesizer's own near-silence and is trimmed.
	Threshold int16
	// MaxPause refuses an utterance whose longest inner run of samples at
	// or below Threshold is this long or longer: the ground truth has one
	// segment per utterance, which a long pause inside would make a lie
	// for any VAD with a shorter hangover.
	MaxPause time.Duration
}

// Segment is where one utterance's audio is in the fixture.
type Segment struct {
	// StartSample is the first sample above the threshold; EndSample is
	// one past the last.
	StartSample int    `json:"start_sample"`
	EndSample   int    `json:"end_sample"`
	Text        string `json:"text"`
	Language    string `json:"language"`
	// MaxPauseMS is the longest run inside the utterance of samples at or
	// below the threshold, in milliseconds.
	MaxPauseMS float64 `json:"max_pause_ms"`
}

// Sidecar is the JSON written beside a fixture WAV.
type Sidecar struct {
	Rate       int       `json:"rate"`
	Language   string    `json:"language"`
	Threshold  int16     `json:"threshold"`
	Segments   []Segment `json:"segments"`
	Transcript string    `json:"transcript"`
}

// trimSpan is [lo, hi) from the first to one past the last sample whose
// absolute value exceeds threshold; ok is false when there is none.
func trimSpan(s []int16, threshold int16) (lo, hi int, ok bool) {
	above := func(v int16) bool { return v > threshold || v < -threshold }
	lo = -1
	for i, v := range s {
		if above(v) {
			lo = i
			break
		}
	}
	if lo < 0 {
		return 0, 0, false
	}
	for hi = len(s); !above(s[hi-1]); hi-- {
	}
	return lo, hi, true
}

// longestQuietRun is the longest run of samples at or below threshold.
func longestQuietRun(s []int16, threshold int16) int {
	best, run := 0, 0
	for _, v := range s {
		if v > threshold || v < -threshold {
			run = 0
			continue
		}
		run++
		best = max(best, run)
	}
	return best
}

// samplesOf is d at rate, rounded to the nearest sample.
func samplesOf(d time.Duration, rate int) int {
	return int(math.Round(d.Seconds() * float64(rate)))
}

// Compose trims the utterances and lays them out: lead silence, first
// utterance, a gap, the next, ..., trail silence. It returns the samples and
// the sidecar with one segment per utterance.
func Compose(utts []Utterance, l Layout, language string) ([]int16, Sidecar, error) {
	switch {
	case len(utts) == 0:
		return nil, Sidecar{}, fmt.Errorf("%w: no utterances", errFixture)
	case l.Rate <= 0:
		return nil, Sidecar{}, fmt.Errorf("%w: rate %d", errFixture, l.Rate)
	case len(utts) > 1 && len(l.Gaps) == 0:
		return nil, Sidecar{}, fmt.Errorf("%w: %d utterances and no gaps", errFixture, len(utts))
	case l.Threshold <= 0:
		return nil, Sidecar{}, fmt.Errorf("%w: threshold %d", errFixture, l.Threshold)
	}
	out := make([]int16, samplesOf(l.Lead, l.Rate))
	sc := Sidecar{Rate: l.Rate, Language: language, Threshold: l.Threshold}
	texts := make([]string, 0, len(utts))
	for i, u := range utts {
		lo, hi, ok := trimSpan(u.Samples, l.Threshold)
		if !ok {
			return nil, Sidecar{}, fmt.Errorf("%w: utterance %d (%q) has no sample above %d", errFixture, i, u.Text, l.Threshold)
		}
		body := u.Samples[lo:hi]
		pause := longestQuietRun(body, l.Threshold)
		if l.MaxPause > 0 && pause >= samplesOf(l.MaxPause, l.Rate) {
			return nil, Sidecar{}, fmt.Errorf("%w: utterance %d (%q) pauses %d samples inside (limit %v)", errFixture, i, u.Text, pause, l.MaxPause)
		}
		if i > 0 {
			out = append(out, make([]int16, samplesOf(l.Gaps[(i-1)%len(l.Gaps)], l.Rate))...)
		}
		sc.Segments = append(sc.Segments, Segment{
			StartSample: len(out),
			EndSample:   len(out) + len(body),
			Text:        u.Text,
			Language:    u.Language,
			MaxPauseMS:  float64(pause) * 1000 / float64(l.Rate),
		})
		out = append(out, body...)
		texts = append(texts, u.Text)
	}
	out = append(out, make([]int16, samplesOf(l.Trail, l.Rate))...)
	sc.Transcript = strings.Join(texts, " ")
	return out, sc, nil
}
