package vad_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

var _ vad.Scorer = (*silero.CallScorer)(nil)
var _ vad.StateResetter = (*silero.CallScorer)(nil)
var _ vad.Gate = (*media.SpeechGate)(nil)

// fixture reads a generated speech fixture and its ground truth.
func fixture(t *testing.T, name string) (*media.WAV, []struct{ Start, End int }) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if dir == filepath.Dir(dir) {
			t.Fatal("no module root")
		}
	}
	base := filepath.Join(dir, ".native", "fixtures", name)
	f, err := os.Open(base + ".wav")
	if err != nil {
		t.Fatalf("speech fixture missing (run go tool task setup): %v", err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, media.DefaultWAVLimit)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Segments []struct {
			StartSample int `json:"start_sample"`
			EndSample   int `json:"end_sample"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	var segs []struct{ Start, End int }
	for _, s := range truth.Segments {
		segs = append(segs, struct{ Start, End int }{s.StartSample, s.EndSample})
	}
	return w, segs
}

// marks is a stand-in session: stt and turn children that record the
// speech marks and count the frames.
type marks struct {
	got    chan any
	frames chan struct{}
}

func (m *marks) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	rec := func(c actor.Context) {
		switch msg := c.Message().(type) {
		case *messages.SpeechStarted, *messages.SpeechStopped:
			if c.Self().Id == ctx.Self().Id+"/"+string(messages.StageTurn) {
				m.got <- msg
			}
		case *messages.AudioFrame:
			msg.Release()
			m.frames <- struct{}{}
		}
	}
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(rec), string(messages.StageTurn))
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(rec), string(messages.StageSTT))
}

// TestSileroThroughTheVADActor: the vad actor in model mode, on the real
// Silero pool, hears each speech fixture (English, Turkish, mixed) at its
// pace (virtual time): one start and one stop per utterance, each within
// 100 ms of the ground truth, and every frame passed on to stt; with the
// 16 kHz model and with the 8 kHz model on the call's 16 kHz audio
// (silero.PoolConfig.ModelRate). Measured on en: the 16 kHz model's starts
// +44, +0.5, -7 ms, stops +0.5, +33, +54 ms; the 8 kHz model's starts +12,
// +0.5, -7 ms, stops +0.5, +33, +22 ms (the log has every fixture's).
// (Mutation seen failing: a window's start time kept from the call's first
// window — every mark at the call's start.)
func TestSileroThroughTheVADActor(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the native runtime, the model and the fixtures")
	}
	type tc struct {
		name             string
		modelRate, floor int
	}
	var cases []tc
	for _, name := range []string{"en", "tr", "mixed"} {
		for _, rate := range []int{silero.Rate16k, silero.Rate8k} {
			cases = append(cases, tc{name, rate, 0}, tc{name, rate, vad.DefaultFloor})
		}
	}
	for _, c := range cases {
		w, truth := fixture(t, c.name)
		modelRate := c.modelRate
		t.Run(fmt.Sprintf("%s model %d Hz floor %d", c.name, modelRate, c.floor), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec, frames, start := feedSilero(t, "silero-call", w.Samples, media.SpeechGateConfig{}, modelRate, c.floor, 64, 1<<16)
				if n := len(rec.frames); n != frames {
					t.Fatalf("%d frames reached stt, %d sent", n, frames)
				}
				var got []time.Duration
				for len(rec.got) > 0 {
					switch m := (<-rec.got).(type) {
					case *messages.SpeechStarted:
						got = append(got, m.At.Sub(start))
					case *messages.SpeechStopped:
						got = append(got, m.At.Sub(start))
					}
				}
				if len(got) != 2*len(truth) {
					t.Fatalf("marks %v, want a start and a stop for each of %d utterances", got, len(truth))
				}
				var offs []time.Duration
				for i, s := range truth {
					for j, want := range []time.Duration{samples(s.Start), samples(s.End)} {
						d := got[2*i+j] - want
						offs = append(offs, d)
						if d.Abs() > 100*time.Millisecond {
							t.Errorf("utterance %d %s: marked at %v, truth %v (off by %v)", i, []string{"start", "stop"}[j], got[2*i+j], want, d)
						}
					}
				}
				t.Logf("marks off the truth (start, stop per utterance): %v", offs)
				time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
			})
		})
	}
}

func samples(n int) time.Duration { return time.Duration(n) * time.Second / 16000 }

// flite speaks text with the flite command's slt voice (16 kHz), cut
// after its last sample of -40 dBFS or more.
func flite(t *testing.T, dir, text string) []int16 {
	t.Helper()
	path := filepath.Join(dir, "u.wav")
	if out, err := exec.Command("flite", "-voice", "slt", "-t", text, "-o", path).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v: %s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, media.DefaultWAVLimit)
	if err != nil {
		t.Fatal(err)
	}
	last := 0
	for i, v := range w.Samples {
		if v >= 328 || v <= -328 {
			last = i
		}
	}
	return w.Samples[:last+1]
}

// TestSileroHearsAShortWordLateInTheCall: a call of 40 turns, "hello",
// "what time is it", "what can you do", "what time is it" over and over
// with 3 s of silence between them, through the vad actor on the real
// Silero pool (the 16 kHz model, and the 8 kHz one on the 16 kHz audio):
// every utterance starts speech. Silero's recurrent state,
// carried over the call, made "hello" score 0.5-0.8 after a few turns
// (0.98 at the start) and the gate missed it in 4 to 6 turns of 10 in
// brisvox-bench latency; the actor resets it after ResetAfterSilence.
// (Mutation seen failing: no reset -> hellos without a start.)
func TestSileroHearsAShortWordLateInTheCall(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the native runtime, the model and flite")
	}
	if _, err := exec.LookPath("flite"); err != nil {
		t.Skip("no flite command")
	}
	if _, err := silero.LocateFiles("", ""); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	phrases := [][]int16{flite(t, dir, "hello"), flite(t, dir, "what time is it"), flite(t, dir, "what can you do"), flite(t, dir, "what time is it")}
	var audio []int16
	audio = append(audio, make([]int16, 16000)...)
	const turns = 40
	for i := range turns {
		audio = append(audio, phrases[i%4]...)
		audio = append(audio, make([]int16, 3*16000+(i*37)%500)...)
	}
	for _, modelRate := range []int{silero.Rate16k, silero.Rate8k} {
		t.Run(fmt.Sprintf("model %d Hz", modelRate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec, _, _ := feedSilero(t, "silero-long-call", audio, media.SpeechGateConfig{Hangover: 250 * time.Millisecond}, modelRate, vad.DefaultFloor, 256, 1<<17)
				starts := 0
				for len(rec.got) > 0 {
					if _, ok := (<-rec.got).(*messages.SpeechStarted); ok {
						starts++
					}
				}
				if starts != turns {
					t.Errorf("%d speech starts in %d turns", starts, turns)
				}
				time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
			})
		})
	}
}

// feedSilero runs a vad actor with a one-worker 16 kHz Silero pool (its
// model at modelRate) and a speech gate of gc (energy detector beside it) inside the caller's synctest
// bubble, plays audio into it in 20 ms frames on the frame clock, waits a
// second, stops the actor and the recorder, and returns the recorder (its
// channels of capacity got and frames), the frames sent and the time of
// the first frame's start.
func feedSilero(t *testing.T, call messages.CallID, audio []int16, gc media.SpeechGateConfig, modelRate, floor, got, frames int) (*marks, int, time.Time) {
	t.Helper()
	pool, err := silero.NewPool(silero.PoolConfig{SampleRate: 16000, ModelRate: modelRate, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sys := kit.NewSystem(zerolog.Nop())
	rec := &marks{got: make(chan any, got), frames: make(chan struct{}, frames)}
	sess := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return rec }))
	synctest.Wait()
	peers := kit.NewPeers(call, sess)
	model := &vad.Model{
		NewScorer: func() (vad.Scorer, error) { return pool.NewScorer(0), nil },
		NewGate: func() vad.Gate {
			g, _ := media.NewSpeechGate(gc)
			return g
		},
		Floor: floor,
	}
	newDet := func() vad.Detector { d, _ := media.NewEnergyVAD(media.EnergyVADConfig{}); return d }
	pid := sys.Root.Spawn(vad.Props(vad.Config{NewDetector: newDet, Model: model}, peers, zerolog.Nop()))
	start := time.Now()
	n := 0
	for i := 0; i+320 <= len(audio); i += 320 {
		f := messages.NewPooledFrame(16000, nil)
		f.Seq, f.Start = uint64(n), start.Add(time.Duration(n)*messages.FrameDuration)
		copy(f.PCM, audio[i:i+320])
		sys.Root.Send(pid, f)
		n++
		time.Sleep(messages.FrameDuration)
	}
	time.Sleep(time.Second)
	if err := sys.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := sys.Root.StopFuture(sess).Wait(); err != nil {
		t.Fatal(err)
	}
	return rec, n, start
}
