package sim

import (
	"errors"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestScenarioBuild(t *testing.T) {
	tests := []struct {
		name       string
		build      func() *Scenario
		wantErr    bool
		frames     int
		utterances []string
		segments   []Segment
	}{
		{
			name: "speech and silence",
			build: func() *Scenario {
				return NewScenario("basic").Silence(100*ms).Speak("hello there", 400*ms).Silence(time.Second)
			},
			frames:     75,
			utterances: []string{"hello there"},
			segments:   []Segment{{Start: 100 * ms, End: 500 * ms}},
		},
		{
			// Mutation: merging adjacent Speak steps would give one segment.
			name: "adjacent speak steps stay separate",
			build: func() *Scenario {
				return NewScenario("adjacent").Speak("one", 200*ms).Speak("two", 200*ms).Silence(200 * ms)
			},
			frames:     30,
			utterances: []string{"one", "two"},
			segments:   []Segment{{Start: 0, End: 200 * ms}, {Start: 200 * ms, End: 400 * ms}},
		},
		{
			name: "durations round to the nearest frame",
			build: func() *Scenario {
				return NewScenario("round").Silence(29*ms).Speak("a", 31*ms).Silence(50 * ms)
			},
			frames:     6,
			utterances: []string{"a"},
			segments:   []Segment{{Start: 20 * ms, End: 60 * ms}},
		},
		{
			name:    "a step under one frame is an error",
			build:   func() *Scenario { return NewScenario("short").Speak("a", 5*ms).Silence(100 * ms) },
			wantErr: true,
			frames:  5,
		},
		{
			name:    "a negative step is an error",
			build:   func() *Scenario { return NewScenario("negative").Silence(-time.Second) },
			wantErr: true,
		},
		{
			name:    "no steps is an error",
			build:   func() *Scenario { return NewScenario("empty") },
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.build()
			err := s.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidScenario) {
				t.Fatalf("Validate() = %v, not ErrInvalidScenario", err)
			}
			if s.FrameCount() != tc.frames {
				t.Errorf("FrameCount() = %d, want %d", s.FrameCount(), tc.frames)
			}
			if s.Duration() != time.Duration(tc.frames)*20*ms {
				t.Errorf("Duration() = %v, want %d frames", s.Duration(), tc.frames)
			}
			if got := s.Utterances(); !slices.Equal(got, tc.utterances) {
				t.Errorf("Utterances() = %q, want %q", got, tc.utterances)
			}
			if got := s.SpeechSegments(); !slices.Equal(got, tc.segments) {
				t.Errorf("SpeechSegments() = %v, want %v", got, tc.segments)
			}
		})
	}
}

func TestScenarioFillFrame(t *testing.T) {
	s := NewScenario("fill").Silence(40*ms).Speak("hi", 60*ms).Silence(20 * ms)
	tests := []struct {
		name   string
		frame  int
		rate   int
		speech bool
	}{
		{name: "first silence", frame: 0, rate: 16000},
		{name: "last silent frame before speech", frame: 1, rate: 16000},
		{name: "first speech frame", frame: 2, rate: 16000, speech: true},
		{name: "last speech frame", frame: 4, rate: 8000, speech: true},
		{name: "trailing silence", frame: 5, rate: 16000},
		{name: "past the end is silence", frame: 6, rate: 16000},
		{name: "negative frame is silence", frame: -1, rate: 16000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pcm := make([]int16, tc.rate/50)
			for i := range pcm {
				pcm[i] = 1 // FillFrame must overwrite everything
			}
			if got := s.FillFrame(tc.frame, tc.rate, pcm); got != tc.speech {
				t.Fatalf("FillFrame(%d) = %v, want %v", tc.frame, got, tc.speech)
			}
			var sum float64
			for _, v := range pcm {
				sum += float64(v) * float64(v)
			}
			rms2 := sum / float64(len(pcm))
			if tc.speech && rms2 < 4000*4000 {
				t.Errorf("speech frame RMS^2 %v is too low", rms2)
			}
			if !tc.speech && rms2 != 0 {
				t.Errorf("silent frame RMS^2 %v, want 0", rms2)
			}
		})
	}
}

func TestScenarioFillFrameDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := NewScenario("alloc").Silence(200*ms).Speak("hello", time.Second).Silence(200 * ms)
	pcm := make([]int16, 320)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		s.FillFrame(i%s.FrameCount(), 16000, pcm)
		i++
	})
	if allocs != 0 {
		t.Fatalf("FillFrame allocates %v times per call", allocs)
	}
}

func BenchmarkScenarioFillFrame(b *testing.B) {
	s := NewScenario("bench").Silence(200*ms).Speak("hello", time.Second).Silence(200 * ms)
	pcm := make([]int16, 320)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.FillFrame(i%s.FrameCount(), 16000, pcm)
		i++
	}
}
