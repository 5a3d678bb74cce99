package recording_test

import (
	"io"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/cmd/internal/records/recording"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// TestWholeCall records a simulated call through the engine (the
// transport actor calls the tap): the caller's two utterances are on the
// left where the script spoke them and end at the turn's VAD stop, the
// bot's answers are on the right from their first audio out to their last
// frame written, the first one cut by the caller's barge-in, and the
// right is silent between them; within one frame each. Mutations caught
// (each seen failing): the tap call dropped from the transport actor's
// write (the right channel silent); the caller's frames placed by the
// time of the tap instead of their capture (20 ms late).
func TestWholeCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		r, err := recording.New(recording.Config{Dir: t.TempDir(), Log: zerolog.New(io.Discard)})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		dir := r.Dir()
		s := sim.NewScenario("recorded").
			Silence(500*time.Millisecond).Speak("when do you open", 1500*time.Millisecond).
			Silence(2500*time.Millisecond).Speak("thanks that is all", time.Second).
			Silence(3 * time.Second)
		var (
			c  *recording.Call
			t0 time.Time
		)
		long := "We open at nine in the morning and close at six in the evening, every day of the week except on public holidays, when we open at ten."
		res, err := (&sim.Call{
			Scenario: s, Linger: time.Second,
			STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
			LLM: providertest.NewMockLLM(providertest.LLMConfig{},
				providertest.Response{Text: long}, providertest.Response{Text: "Goodbye."}),
			TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
			Configure: func(cfg *session.Config) {
				t0 = time.Now()
				var err error
				if c, err = r.Begin(string(cfg.Call), cfg.Conn.InputRate(), cfg.Conn.OutputRate()); err != nil {
					t.Fatal(err)
				}
				cfg.Tap = c
			},
		}).Run()
		if err != nil {
			t.Fatal(err)
		}
		rec := c.Close()
		f := readStereo(t, dir, rec)
		if rec.DroppedFrames != 0 {
			t.Fatalf("%d frames dropped", rec.DroppedFrames)
		}
		fs := f.frameSamples()
		near := func(what string, got int, want time.Duration) {
			t.Helper()
			if w := f.at(want); got < w-fs || got > w+fs {
				t.Errorf("%s at %v in the recording, want %v within a frame", what, time.Duration(got)*time.Second/time.Duration(f.rate), want)
			}
		}
		offset := res.Start.Sub(t0) // the loopback's clock against the recording's
		segs := s.SpeechSegments()
		if len(segs) != 2 {
			t.Fatalf("segments %v", segs)
		}
		stops := map[messages.Epoch]time.Time{}
		for _, tl := range res.Timelines {
			if at, ok := tl.Marks[messages.MarkVADStop]; ok {
				stops[tl.Epoch] = at
			}
		}
		// The caller's frames are placed by their capture time: to the
		// sample.
		for _, seg := range segs {
			from, to := f.at(offset+seg.Start), f.at(offset+seg.End)
			if got := firstLoud(f.left, from-fs); got != from {
				t.Errorf("the caller's utterance at sample %d, want %d", got, from)
			}
			if got := lastLoud(f.left, to+fs); got != to {
				t.Errorf("the caller's utterance's end at sample %d, want %d", got, to)
			}
		}
		// The bot's answers as the loopback received them.
		type span struct{ first, last time.Time }
		var epochs []messages.Epoch
		spans := map[messages.Epoch]*span{}
		for _, rc := range res.Records {
			if rc.Kind != sim.RecordAudio {
				continue
			}
			sp := spans[rc.Epoch]
			if sp == nil {
				sp = &span{first: rc.At}
				spans[rc.Epoch] = sp
				epochs = append(epochs, rc.Epoch)
			}
			sp.last = rc.At
		}
		if len(epochs) != 2 {
			t.Fatalf("answers of epochs %v, want two", epochs)
		}
		for i, e := range epochs {
			sp := spans[e]
			near("the bot's answer", firstLoud(f.right, f.at(sp.first.Sub(t0)-frame)), sp.first.Sub(t0))
			near("the bot's answer's end", lastLoud(f.right, f.at(sp.last.Sub(t0)+2*frame)), sp.last.Sub(t0)+frame)
			for _, tl := range res.Timelines {
				if at, ok := tl.Marks[messages.MarkFirstAudioOut]; ok && tl.Epoch == e {
					near("the first audio out mark", firstLoud(f.right, f.at(sp.first.Sub(t0)-frame)), at.Sub(t0))
				}
			}
			if i == 0 {
				// Cut by the second utterance: it ends after the caller
				// began and before the text would have played out.
				if cut := sp.last.Sub(res.Start); cut < segs[1].Start || cut > segs[1].Start+500*time.Millisecond {
					t.Errorf("the first answer played %v to %v: not cut by the barge-in at %v", sp.first.Sub(t0), sp.last.Sub(t0), offset+segs[1].Start)
				}
			}
		}
		gapFrom, gapTo := f.at(spans[epochs[0]].last.Sub(t0)+2*frame), f.at(spans[epochs[1]].first.Sub(t0)-frame)
		if gapFrom >= gapTo || !silentBetween(f.right, gapFrom, gapTo) {
			t.Errorf("the bot's channel is not silent between its answers (%d to %d)", gapFrom, gapTo)
		}
		if len(stops) == 0 {
			t.Fatal("no vad stop in the timelines")
		}
		for e, at := range stops {
			// A VAD stop is the end of an utterance in audio time.
			ok := false
			for _, seg := range segs {
				if d := at.Sub(res.Start) - seg.End; d > -frame && d < frame {
					ok = true
				}
			}
			if !ok {
				t.Errorf("vad stop of epoch %d at %v: no utterance ends within a frame of it", e, at.Sub(res.Start))
			}
			near("the utterance's end at its vad stop", lastLoud(f.left, f.at(at.Sub(t0)+frame)), at.Sub(t0))
		}
		t.Logf("offset %v, utterances %v, answers %v-%v and %v-%v, vad stops %v, %v ms recorded",
			offset, segs, spans[epochs[0]].first.Sub(t0), spans[epochs[0]].last.Sub(t0),
			spans[epochs[1]].first.Sub(t0), spans[epochs[1]].last.Sub(t0), stops, rec.DurationMS)
	})
}

// recordedCall is the whole-call script of TestWholeCall; configure, when
// set, adds the recording's tap.
func recordedCall(configure func(*session.Config)) *sim.Call {
	s := sim.NewScenario("recorded").
		Silence(500*time.Millisecond).Speak("when do you open", 1500*time.Millisecond).
		Silence(2500*time.Millisecond).Speak("thanks that is all", time.Second).
		Silence(3 * time.Second)
	return &sim.Call{
		Scenario: s, Linger: time.Second,
		STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{},
			providertest.Response{Text: "We open at nine in the morning and close at six in the evening, every day of the week."},
			providertest.Response{Text: "Goodbye."}),
		TTS:       providertest.NewMockTTS(providertest.TTSConfig{}),
		Configure: configure,
	}
}

// TestBlockedDiskKeepsTheCallsTime: a whole call recorded to a disk that
// hangs from the first write plays the bot's frames at exactly the times
// of the same call without a recording (the frames' jitter unchanged),
// and the recording's drops are counted. Mutation caught (seen failing):
// a tap that blocks when the queue is full (the bot's frames stop: the
// call's times differ, or synctest reports the deadlock).
func TestBlockedDiskKeepsTheCallsTime(t *testing.T) {
	defer goleak.VerifyNone(t)
	audioTimes := func(res *sim.Result) []time.Duration {
		var at []time.Duration
		for _, rc := range res.Records {
			if rc.Kind == sim.RecordAudio {
				at = append(at, rc.At.Sub(res.Start))
			}
		}
		return at
	}
	var plain, recorded []time.Duration
	synctest.Test(t, func(t *testing.T) {
		res, err := recordedCall(nil).Run()
		if err != nil {
			t.Fatal(err)
		}
		plain = audioTimes(res)
	})
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		block := func(w io.Writer) io.Writer {
			return writerFunc(func(p []byte) (int, error) { <-gate; return w.Write(p) })
		}
		r, err := recording.New(recording.Config{Dir: t.TempDir(), Queue: 50, Log: zerolog.New(io.Discard)}, recording.WithWriter(block))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var c *recording.Call
		res, err := recordedCall(func(cfg *session.Config) {
			if c, err = r.Begin(string(cfg.Call), cfg.Conn.InputRate(), cfg.Conn.OutputRate()); err != nil {
				t.Fatal(err)
			}
			cfg.Tap = c
		}).Run()
		if err != nil {
			t.Fatal(err)
		}
		recorded = audioTimes(res)
		close(gate)
		if rec := c.Close(); rec == nil || rec.DroppedFrames == 0 {
			t.Fatalf("recording %+v: want drops", rec)
		}
	})
	if len(plain) == 0 || !slices.Equal(plain, recorded) {
		t.Fatalf("the bot's %d frames played at other times with the disk blocked (%d frames)", len(plain), len(recorded))
	}
}
