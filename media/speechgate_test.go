package media

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// gateWindow is Silero VAD's window length.
const gateWindow = 32 * time.Millisecond

// gateProbs turns a pattern into one probability per window: 'S' speech
// (0.9), 'm' maybe (0.4, between the default thresholds), '.' silence
// (0.05), 'n' NaN, 'h' exactly the start threshold, 'l' exactly the stop
// threshold.
func gateProbs(pattern string) []float32 {
	probs := make([]float32, len(pattern))
	for i, c := range pattern {
		switch c {
		case 'S':
			probs[i] = 0.9
		case 'm':
			probs[i] = 0.4
		case '.':
			probs[i] = 0.05
		case 'n':
			probs[i] = float32(math.NaN())
		case 'h':
			probs[i] = DefaultSpeechStartThreshold
		case 'l':
			probs[i] = DefaultSpeechStartThreshold - DefaultSpeechThresholdGap
		default:
			panic("bad pattern byte " + string(c))
		}
	}
	return probs
}

func TestSpeechGateProcess(t *testing.T) {
	r := strings.Repeat
	tests := []struct {
		name    string
		cfg     SpeechGateConfig
		pattern string // one byte per 32 ms window, see gateProbs
		want    []vadMark
	}{
		{
			name:    "one speech window does not start",
			pattern: "..S" + r(".", 12),
		},
		{
			// Mutation: counting the run across a silent window starts here.
			name:    "a silent window resets an unconfirmed run",
			pattern: "S.S.S.S." + r(".", 12),
		},
		{
			name:    "start on the second speech window, backdated to the first",
			pattern: "...SS..",
			want:    []vadMark{{frame: 4, ev: VADStart, at: 3 * gateWindow}},
		},
		{
			// Mutation: starting a run at the stop threshold (no hysteresis
			// on the way up) starts here.
			name:    "maybe windows alone never start",
			pattern: r("m", 30),
		},
		{
			// Mutation: requiring the start threshold for every window of
			// the run (no hysteresis inside a run) does not start here.
			name:    "a run begun by speech continues through a maybe window",
			pattern: ".Sm..",
			want:    []vadMark{{frame: 2, ev: VADStart, at: gateWindow}},
		},
		{
			name:    "thresholds are inclusive",
			pattern: "hl" + r(".", 10),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 11, ev: VADStop, at: 2 * gateWindow},
			},
		},
		{
			// Mutation: stopping after 9 windows (288 ms), or dating the
			// stop at the start of the last speech window, fails here.
			name:    "hangover of 10 windows (320 ms) stops, backdated to the end of speech",
			pattern: "SSS" + r(".", 12),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 12, ev: VADStop, at: 3 * gateWindow},
			},
		},
		{
			// Mutation: a stop below the start threshold (no hysteresis on
			// the way down) stops here.
			name:    "maybe windows keep speech going",
			pattern: "SS" + r("m", 30),
			want:    []vadMark{{frame: 1, ev: VADStart, at: 0}},
		},
		{
			name:    "maybe windows extend the speech the stop is dated at",
			pattern: "SSmm" + r(".", 10),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 13, ev: VADStop, at: 4 * gateWindow},
			},
		},
		{
			// Mutation: not resetting the hangover on speech stops at 11.
			name:    "speech resuming inside the hangover keeps speaking",
			pattern: "SS" + r(".", 9) + "S" + r(".", 10),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 21, ev: VADStop, at: 12 * gateWindow},
			},
		},
		{
			name:    "NaN is silence",
			pattern: "SnS" + r("n", 3) + "SS" + r("n", 10),
			want: []vadMark{
				{frame: 7, ev: VADStart, at: 6 * gateWindow},
				{frame: 17, ev: VADStop, at: 8 * gateWindow},
			},
		},
		{
			name:    "a second utterance starts again",
			pattern: "SS" + r(".", 10) + "..SSS" + r(".", 10),
			want: []vadMark{
				{frame: 1, ev: VADStart, at: 0},
				{frame: 11, ev: VADStop, at: 2 * gateWindow},
				{frame: 15, ev: VADStart, at: 14 * gateWindow},
				{frame: 26, ev: VADStop, at: 17 * gateWindow},
			},
		},
		{
			name:    "custom thresholds and durations",
			cfg:     SpeechGateConfig{StartThreshold: 0.8, StopThreshold: 0.3, MinSpeech: 96 * time.Millisecond, Hangover: 64 * time.Millisecond},
			pattern: "mmSSm..SmmS...",
			want: []vadMark{
				{frame: 4, ev: VADStart, at: 2 * gateWindow},
				{frame: 6, ev: VADStop, at: 5 * gateWindow},
				{frame: 9, ev: VADStart, at: 7 * gateWindow},
				{frame: 12, ev: VADStop, at: 11 * gateWindow},
			},
		},
		{
			// MinSpeech zero takes the default; a nanosecond is the way to
			// start on the first speech window.
			name:    "min speech of 1ns starts on the first speech window",
			cfg:     SpeechGateConfig{MinSpeech: time.Nanosecond},
			pattern: "..S",
			want:    []vadMark{{frame: 2, ev: VADStart, at: 2 * gateWindow}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewSpeechGate(tc.cfg)
			if err != nil {
				t.Fatalf("NewSpeechGate: %v", err)
			}
			var got []vadMark
			for i, p := range gateProbs(tc.pattern) {
				ev, at := g.Process(p, testBase.Add(time.Duration(i)*gateWindow), gateWindow)
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

func TestSpeechGateSpeakingAndReset(t *testing.T) {
	g, err := NewSpeechGate(SpeechGateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	g.Process(0.9, testBase, gateWindow)
	if g.Speaking() {
		t.Fatal("speaking after one window")
	}
	g.Reset()
	if ev, _ := g.Process(0.9, testBase.Add(gateWindow), gateWindow); ev != VADNone || g.Speaking() {
		t.Fatalf("first window after Reset gave %v", ev)
	}
	// Mutation: a Reset that keeps the unconfirmed run dates this start at
	// the window before the Reset.
	if ev, at := g.Process(0.9, testBase.Add(2*gateWindow), gateWindow); ev != VADStart || !g.Speaking() || !at.Equal(testBase.Add(gateWindow)) {
		t.Fatalf("second window gave %v at %v, want a start at the first window after Reset", ev, at.Sub(testBase))
	}
	g.Reset()
	if g.Speaking() {
		t.Fatal("speaking after Reset")
	}
}

func TestSpeechGateConfig(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name      string
		cfg       SpeechGateConfig
		wantErr   bool
		wantStop  float32 // the effective stop threshold when valid
		wantStart float32
	}{
		{name: "zero takes defaults", wantStart: 0.5, wantStop: 0.35},
		{name: "stop follows start", cfg: SpeechGateConfig{StartThreshold: 0.7}, wantStart: 0.7, wantStop: 0.55},
		{name: "low start halves", cfg: SpeechGateConfig{StartThreshold: 0.1}, wantStart: 0.1, wantStop: 0.05},
		{name: "equal thresholds", cfg: SpeechGateConfig{StartThreshold: 0.6, StopThreshold: 0.6}, wantStart: 0.6, wantStop: 0.6},
		{name: "stop above start", cfg: SpeechGateConfig{StartThreshold: 0.3, StopThreshold: 0.4}, wantErr: true},
		{name: "stop above the default start", cfg: SpeechGateConfig{StopThreshold: 0.6}, wantErr: true},
		{name: "NaN start", cfg: SpeechGateConfig{StartThreshold: nan}, wantErr: true},
		{name: "NaN stop", cfg: SpeechGateConfig{StopThreshold: nan}, wantErr: true},
		{name: "start above 1", cfg: SpeechGateConfig{StartThreshold: 1.5}, wantErr: true},
		{name: "negative stop", cfg: SpeechGateConfig{StopThreshold: -0.1}, wantErr: true},
		{name: "negative min speech", cfg: SpeechGateConfig{MinSpeech: -time.Millisecond}, wantErr: true},
		{name: "negative hangover", cfg: SpeechGateConfig{Hangover: -time.Millisecond}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate() = %v, wantErr %v", err, tc.wantErr)
			}
			g, nerr := NewSpeechGate(tc.cfg)
			if (nerr != nil) != tc.wantErr {
				t.Fatalf("NewSpeechGate = %v", nerr)
			}
			if g == nil {
				return
			}
			c := g.Config()
			if math.Abs(float64(c.StartThreshold-tc.wantStart)) > 1e-6 || math.Abs(float64(c.StopThreshold-tc.wantStop)) > 1e-6 {
				t.Errorf("thresholds %v/%v, want %v/%v", c.StartThreshold, c.StopThreshold, tc.wantStart, tc.wantStop)
			}
		})
	}
}

func TestSpeechGateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	g, err := NewSpeechGate(SpeechGateConfig{})
	if err != nil {
		t.Fatal(err)
	}
	probs := gateProbs("SSSSS" + strings.Repeat(".", 15))
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		g.Process(probs[i%len(probs)], testBase.Add(time.Duration(i)*gateWindow), gateWindow)
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per window, want 0", allocs)
	}
}

func BenchmarkSpeechGate(b *testing.B) {
	g, err := NewSpeechGate(SpeechGateConfig{})
	if err != nil {
		b.Fatal(err)
	}
	probs := gateProbs("SSSSS" + strings.Repeat(".", 15))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g.Process(probs[i%len(probs)], testBase.Add(time.Duration(i)*gateWindow), gateWindow)
		i++
	}
}
