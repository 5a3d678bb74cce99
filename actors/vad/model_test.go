package vad_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
)

// errFull is the test scorer's refusal.
var errFull = errors.New("test scorer: queue full")

// testScorer scores a window by its energy after a latency, on its own
// goroutine, like an inference pool: loud windows are speech. refuseEvery
// refuses every n-th window.
type testScorer struct {
	samples     int
	latency     time.Duration
	refuseEvery int
	mu          sync.Mutex
	n           int
	wg          sync.WaitGroup
}

func (s *testScorer) WindowSamples() int { return s.samples }

func (s *testScorer) Score(window []int16, done func(float32, error)) error {
	s.mu.Lock()
	s.n++
	refuse := s.refuseEvery > 0 && s.n%s.refuseEvery == 0
	s.mu.Unlock()
	if refuse {
		return errFull
	}
	var sum float64
	for _, v := range window {
		sum += float64(v) * float64(v)
	}
	p := float32(0.02)
	if math.Sqrt(sum/float64(len(window))) > 500 {
		p = 0.95
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		time.Sleep(s.latency)
		done(p, nil)
	}()
	return nil
}

func (s *testScorer) Close() error { s.wg.Wait(); return nil }

// testGate: two speech windows start speech (backdated to the first), ten
// quiet ones stop it (backdated to the end of the last speech window).
type testGate struct {
	speaking       bool
	run            int
	runStart, last time.Time
}

func (g *testGate) Speaking() bool { return g.speaking }

func (g *testGate) Process(p float32, start time.Time, dur time.Duration) (media.VADEvent, time.Time) {
	speech := p >= 0.5
	switch {
	case !g.speaking && speech:
		if g.run == 0 {
			g.runStart = start
		}
		g.run++
		g.last = start.Add(dur)
		if g.run >= 2 {
			g.speaking, g.run = true, 0
			return media.VADStart, g.runStart
		}
	case !g.speaking:
		g.run = 0
	case speech:
		g.run = 0
		g.last = start.Add(dur)
	default:
		g.run++
		if g.run >= 10 {
			g.speaking, g.run = false, 0
			return media.VADStop, g.last
		}
	}
	return media.VADNone, time.Time{}
}

func modelCall(t *testing.T, s *sim.Scenario, newScorer func() (vad.Scorer, error), log zerolog.Logger) *sim.Result {
	t.Helper()
	r, err := (&sim.Call{
		Scenario: s, Linger: 2 * time.Second, Log: log,
		STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "Hello there."}, providertest.Response{Text: "Again."}),
		TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
		Configure: func(c *session.Config) {
			c.VADModel = &vad.Model{NewScorer: newScorer, NewGate: func() vad.Gate { return &testGate{} }}
		},
	}).Run()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.CheckInvariants(r, 0); err != nil {
		t.Fatal(err)
	}
	return r
}

func vadStats(r *sim.Result) *messages.Description {
	for _, ch := range r.Tree.Children {
		if ch.Name == string(messages.StageVAD) {
			return ch
		}
	}
	return nil
}

func twoTurns() *sim.Scenario {
	return sim.NewScenario("vad-model").Silence(500*time.Millisecond).Speak("Hello.", time.Second).
		Silence(3*time.Second).Speak("Are you there?", time.Second).Silence(3 * time.Second)
}

// TestModelModeTakesTurns: with a model scoring 512-sample windows on its
// own goroutines, the call hears both turns and answers them; every frame
// reaches stt (the invariants check it); the speech start and stop are
// the gate's backdated times. (Mutations seen failing: the frame not
// passed on to stt in model mode — audio lost; the score not fed to the
// gate — no turn.)
func TestModelModeTakesTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := modelCall(t, twoTurns(), func() (vad.Scorer, error) {
			return &testScorer{samples: 512, latency: 3 * time.Millisecond}, nil
		}, zerolog.Nop())
		d := vadStats(r)
		if d.Counters["starts"] != 2 || d.Counters["stops"] != 2 || d.Counters["windows"] == 0 || d.Counters["windows_refused"] != 0 {
			t.Fatalf("vad counters %v", d.Counters)
		}
		if got := r.TurnEpochs(); len(got) != 2 {
			t.Fatalf("turns %v, want 2", got)
		}
	})
}

// TestRefusedWindowsRecover: a pool that refuses every third window costs
// those windows, nothing else: the turns are still taken and every frame
// still reaches stt. (Mutation seen failing: a refusal leaving the window
// marked in flight — the detector never scores again.)
func TestRefusedWindowsRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := modelCall(t, twoTurns(), func() (vad.Scorer, error) {
			return &testScorer{samples: 512, latency: 3 * time.Millisecond, refuseEvery: 3}, nil
		}, zerolog.Nop())
		d := vadStats(r)
		if d.Counters["windows_refused"] == 0 || d.Counters["starts"] != 2 || d.Counters["stops"] != 2 {
			t.Fatalf("vad counters %v", d.Counters)
		}
	})
}

// TestSlowModelSkipsWindows: a model slower than two windows never makes
// the actor wait: one window waits behind the one in flight, older ones
// are skipped and counted, and the turns are still taken. (Mutation seen
// failing: submitting while a window is in flight — the scorer sees two
// at once.)
func TestSlowModelSkipsWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sc *oneAtATime
		r := modelCall(t, twoTurns(), func() (vad.Scorer, error) {
			sc = &oneAtATime{testScorer: testScorer{samples: 512, latency: 80 * time.Millisecond}}
			return sc, nil
		}, zerolog.Nop())
		d := vadStats(r)
		if d.Counters["windows_skipped"] == 0 || d.Counters["starts"] != 2 {
			t.Fatalf("vad counters %v", d.Counters)
		}
		if sc.overlaps != 0 {
			t.Fatalf("%d windows submitted while one was in flight", sc.overlaps)
		}
	})
}

// oneAtATime counts submissions made while a window is in flight.
type oneAtATime struct {
	testScorer
	flying   bool
	overlaps int
	mu2      sync.Mutex
}

func (s *oneAtATime) Score(window []int16, done func(float32, error)) error {
	s.mu2.Lock()
	if s.flying {
		s.overlaps++
	}
	s.flying = true
	s.mu2.Unlock()
	return s.testScorer.Score(window, func(p float32, err error) {
		s.mu2.Lock()
		s.flying = false
		s.mu2.Unlock()
		done(p, err)
	})
}

// TestModelUnavailableFallsBack: when the model cannot be had (no runtime
// library, no model file), the actor runs the energy detector, warns in
// the log with the reason and the call id, and Describe says
// energy_fallback. (Mutation seen failing: no fallback — no turn is ever
// taken.)
func TestModelUnavailableFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := zerolog.New(&buf)
		r := modelCall(t, twoTurns(), func() (vad.Scorer, error) {
			return nil, errors.New("silero: model file /x/silero_vad_v5.onnx missing: run go tool task setup")
		}, log)
		d := vadStats(r)
		if d.State != "energy_fallback" || d.Counters["model_unavailable"] != 1 || d.Counters["starts"] != 2 {
			t.Fatalf("vad %q %v", d.State, d.Counters)
		}
		if !strings.Contains(buf.String(), "using the energy detector") || !strings.Contains(buf.String(), "go tool task setup") {
			t.Fatalf("log: %s", buf.String())
		}
	})
}

// resettingScorer is a testScorer with a state to reset.
type resettingScorer struct {
	testScorer
	resets int
}

func (s *resettingScorer) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resets++
	return nil
}

// TestModelStateResetAfterSilence: a scorer with a state is reset once per
// stretch of ResetAfterSilence of silence, never while speech goes on:
// twoTurns has two, the 3 s after each turn (the 0.5 s before the first
// is too short). Mutation caught: the reset made at every quiet window past the
// second (dozens), or not at all (both seen failing).
func TestModelStateResetAfterSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &resettingScorer{testScorer: testScorer{samples: 512, latency: 3 * time.Millisecond}}
		r := modelCall(t, twoTurns(), func() (vad.Scorer, error) { return s, nil }, zerolog.Nop())
		d := vadStats(r)
		s.mu.Lock()
		resets := s.resets
		s.mu.Unlock()
		if resets != 2 || d.Counters["model_resets"] != 2 || len(r.TurnEpochs()) != 2 {
			t.Fatalf("%d resets (counter %d), %d turns: want 2 resets, 2 turns", resets, d.Counters["model_resets"], len(r.TurnEpochs()))
		}
	})
}

// floorScorer is a resettingScorer that records the quietest window it
// was given.
type floorScorer struct {
	resettingScorer
	minRMS float64
}

func (s *floorScorer) Score(window []int16, done func(float32, error)) error {
	var sum float64
	for _, v := range window {
		sum += float64(v) * float64(v)
	}
	s.mu.Lock()
	if rms := math.Sqrt(sum / float64(len(window))); s.n == 0 || rms < s.minRMS {
		s.minRMS = rms
	}
	s.mu.Unlock()
	return s.resettingScorer.Score(window, done)
}

// TestFloorSkipsSilentWindows: with Model.Floor set, the silences of
// twoTurns (digital zero) never reach the scorer; they are scored 0 at
// once, so the gate still stops both turns and the state is still reset
// once per second of silence. Mutations caught (seen failing): the floor
// check dropped (the scorer gets the silent windows), a window under the
// floor not fed to the gate (no stop, one turn), the reset counting only
// the scorer's windows (no reset).
func TestFloorSkipsSilentWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &floorScorer{resettingScorer: resettingScorer{testScorer: testScorer{samples: 512, latency: 3 * time.Millisecond}}}
		r, err := (&sim.Call{
			Scenario: twoTurns(), Linger: 2 * time.Second, Log: zerolog.Nop(),
			STT: providertest.NewMockSTT(providertest.STTConfig{}, twoTurns().Utterances()),
			LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "Hello there."}, providertest.Response{Text: "Again."}),
			TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
			Configure: func(c *session.Config) {
				c.VADModel = &vad.Model{NewScorer: func() (vad.Scorer, error) { return s, nil },
					NewGate: func() vad.Gate { return &testGate{} }, Floor: vad.DefaultFloor}
			},
		}).Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		d := vadStats(r)
		s.mu.Lock()
		minRMS, resets, scored := s.minRMS, s.resets, s.n
		s.mu.Unlock()
		if scored == 0 || minRMS < vad.DefaultFloor {
			t.Errorf("the scorer got %d windows, the quietest at RMS %.1f (floor %d)", scored, minRMS, vad.DefaultFloor)
		}
		if d.Counters["windows_below_floor"] == 0 || d.Counters["starts"] != 2 || d.Counters["stops"] != 2 || resets != 2 {
			t.Errorf("vad counters %v, %d resets: want windows under the floor, 2 starts, 2 stops, 2 resets", d.Counters, resets)
		}
		if got := r.TurnEpochs(); len(got) != 2 {
			t.Errorf("turns %v, want 2", got)
		}
	})
}

// TestFloorOf: the agent file's levels to RMS floors. Mutation caught:
// a power ratio (10^(dB/10)) instead of an amplitude one.
func TestFloorOf(t *testing.T) {
	for _, c := range []struct {
		db   float64
		want int
	}{{-60, vad.DefaultFloor}, {-100, 0}, {-90, 1}, {-40, 328}, {-30, vad.MaxFloor}, {-10, vad.MaxFloor}} {
		if got := vad.FloorOf(c.db); got != c.want {
			t.Errorf("FloorOf(%v) = %d, want %d", c.db, got, c.want)
		}
	}
}
