package media

import (
	"errors"
	"math"
	"testing"
	"time"
)

const testFrame = 20 * time.Millisecond

// testBase is an arbitrary call start; the detector only compares times.
var testBase = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// frames makes one 16 kHz frame of speech (a square wave far above the
// threshold) and one of silence.
func frames() (speech, silence []int16) {
	speech = make([]int16, 320)
	for i := range speech {
		if (i/40)%2 == 0 {
			speech[i] = 8000
		} else {
			speech[i] = -8000
		}
	}
	return speech, make([]int16, 320)
}

type vadMark struct {
	frame int           // index of the frame whose Process reported the event
	ev    VADEvent      // the event
	at    time.Duration // the reported time, as an offset from testBase
}

func TestEnergyVADProcess(t *testing.T) {
	speechRun := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'S'
		}
		return string(b)
	}
	silence := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = '.'
		}
		return string(b)
	}
	tests := []struct {
		name    string
		cfg     EnergyVADConfig
		pattern string // one byte per 20 ms frame: S speech, . silence
		want    []vadMark
	}{
		{
			name:    "short blip under 40ms does not start",
			pattern: "..S" + silence(20),
		},
		{
			// Mutation: counting the run across a silent frame would start here.
			name:    "silent frame resets an unconfirmed run",
			pattern: "S.S.S." + silence(20),
		},
		{
			name:    "start on the second speech frame, backdated to the first",
			pattern: "...SS" + silence(2),
			want:    []vadMark{{frame: 4, ev: VADStart, at: 3 * testFrame}},
		},
		{
			// Mutation: stopping after 14 frames, or dating the stop at the
			// start of the last speech frame, fails here.
			name:    "hangover of exactly 300ms stops, backdated to the end of speech",
			pattern: "SSS" + silence(15),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 17, ev: VADStop, at: 3 * testFrame},
			},
		},
		{
			name:    "hangover of 280ms does not stop",
			pattern: "SS" + silence(14),
			want:    []vadMark{{frame: 1, ev: VADStart, at: 0}},
		},
		{
			// Mutation: not resetting the hangover on speech stops at frame 17.
			name:    "speech resuming inside the hangover keeps speaking",
			pattern: "SS" + silence(14) + "S" + silence(14) + "S" + silence(15),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 46, ev: VADStop, at: 32 * testFrame},
			},
		},
		{
			name:    "a second utterance starts again",
			pattern: "SS" + silence(15) + "..SSS" + silence(15),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 16, ev: VADStop, at: 2 * testFrame},
				{frame: 20, ev: VADStart, at: 19 * testFrame},
				{frame: 36, ev: VADStop, at: 22 * testFrame},
			},
		},
		{
			name:    "custom start and stop",
			cfg:     EnergyVADConfig{StartAfter: 60 * time.Millisecond, StopAfter: 100 * time.Millisecond},
			pattern: "SS." + speechRun(3) + silence(5),
			want: []vadMark{
				{frame: 5, ev: VADStart, at: 3 * testFrame},
				{frame: 10, ev: VADStop, at: 6 * testFrame},
			},
		},
		{
			name:    "threshold above the signal never starts",
			cfg:     EnergyVADConfig{Threshold: 9000},
			pattern: speechRun(30),
		},
	}
	speech, quiet := frames()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewEnergyVAD(tc.cfg)
			if err != nil {
				t.Fatalf("NewEnergyVAD: %v", err)
			}
			var got []vadMark
			for i := range len(tc.pattern) {
				pcm := quiet
				if tc.pattern[i] == 'S' {
					pcm = speech
				}
				ev, at := v.Process(pcm, testBase.Add(time.Duration(i)*testFrame), testFrame)
				if ev != VADNone {
					got = append(got, vadMark{frame: i, ev: ev, at: at.Sub(testBase)})
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events = %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestEnergyVADSpeakingAndReset(t *testing.T) {
	speech, _ := frames()
	v, err := NewEnergyVAD(EnergyVADConfig{})
	if err != nil {
		t.Fatal(err)
	}
	v.Process(speech, testBase, testFrame)
	if v.Speaking() {
		t.Fatal("speaking after one frame")
	}
	v.Process(speech, testBase.Add(testFrame), testFrame)
	if !v.Speaking() {
		t.Fatal("not speaking after two frames")
	}
	v.Reset()
	if v.Speaking() {
		t.Fatal("speaking after Reset")
	}
	// Mutation: a Reset that keeps the run would start on this frame.
	if ev, _ := v.Process(speech, testBase.Add(2*testFrame), testFrame); ev != VADNone {
		t.Fatalf("first frame after Reset gave %v", ev)
	}
}

func TestEnergyVADConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     EnergyVADConfig
		wantErr bool
	}{
		{name: "zero takes defaults", cfg: EnergyVADConfig{}},
		{name: "explicit values", cfg: EnergyVADConfig{Threshold: 300, StartAfter: time.Millisecond, StopAfter: time.Second}},
		{name: "NaN threshold", cfg: EnergyVADConfig{Threshold: math.NaN()}, wantErr: true},
		{name: "infinite threshold", cfg: EnergyVADConfig{Threshold: math.Inf(1)}, wantErr: true},
		{name: "negative threshold", cfg: EnergyVADConfig{Threshold: -1}, wantErr: true},
		{name: "negative start", cfg: EnergyVADConfig{StartAfter: -time.Millisecond}, wantErr: true},
		{name: "negative stop", cfg: EnergyVADConfig{StopAfter: -time.Millisecond}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate() = %v, does not wrap ErrInvalidConfig", err)
			}
			v, nerr := NewEnergyVAD(tc.cfg)
			if (nerr != nil) != tc.wantErr || (nerr == nil) != (v != nil) {
				t.Fatalf("NewEnergyVAD = %v, %v", v, nerr)
			}
		})
	}
}

func TestEnergyVADProcessDoesNotAllocate(t *testing.T) {
	speech, quiet := frames()
	v, err := NewEnergyVAD(EnergyVADConfig{})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		pcm := quiet
		if i%40 < 20 {
			pcm = speech
		}
		v.Process(pcm, testBase.Add(time.Duration(i)*testFrame), testFrame)
		i++
	})
	if allocs != 0 {
		t.Fatalf("Process allocates %v times per call", allocs)
	}
}

func BenchmarkEnergyVAD(b *testing.B) {
	speech, quiet := frames()
	v, err := NewEnergyVAD(EnergyVADConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		pcm := quiet
		if i%40 < 20 {
			pcm = speech
		}
		v.Process(pcm, testBase.Add(time.Duration(i)*testFrame), testFrame)
		i++
	}
}

// TestEnergyVADEdgeRefinement: frames above the edge threshold but under
// the speech threshold around an utterance pull its marks out to them, by
// at most EdgeMax, and never decide speech by themselves. (Mutations seen
// failing: no EdgeMax bound — the start goes back a whole second of soft
// noise; edge frames counted as speech — the noise alone starts speech.)
func TestEnergyVADEdgeRefinement(t *testing.T) {
	v, err := NewEnergyVAD(EnergyVADConfig{})
	if err != nil {
		t.Fatal(err)
	}
	frame := func(level int16) []int16 {
		pcm := make([]int16, 320)
		for i := range pcm {
			pcm[i] = level
			if i%2 == 1 {
				pcm[i] = -level
			}
		}
		return pcm
	}
	var t0 time.Time
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 20 * time.Millisecond) }
	type step struct {
		level int16
		n     int
	}
	// 1 s of soft noise (RMS 100: above 500/8, under 500), 200 ms of
	// speech, 100 ms of soft ending, then silence.
	script := []step{{100, 50}, {2000, 10}, {100, 5}, {0, 30}}
	var marks []time.Duration
	i := 0
	for _, s := range script {
		for range s.n {
			if ev, ts := v.Process(frame(s.level), at(i), 20*time.Millisecond); ev != VADNone {
				marks = append(marks, ts.Sub(t0))
			}
			i++
		}
	}
	// Speech 1000-1200 ms: the start goes back at most 200 ms over the
	// soft noise, the stop on over the 100 ms soft ending.
	want := []time.Duration{800 * time.Millisecond, 1300 * time.Millisecond}
	if len(marks) != 2 || marks[0] != want[0] || marks[1] != want[1] {
		t.Fatalf("marks %v, want %v", marks, want)
	}
	for _, bad := range []EnergyVADConfig{{EdgeThreshold: -1}, {Threshold: 100, EdgeThreshold: 200}, {EdgeMax: -time.Millisecond}} {
		if _, err := NewEnergyVAD(bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %+v: %v", bad, err)
		}
	}
}
