package pacer_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestProviderAudioAtOtherRates: a synthesizer at 24 kHz on a 16 kHz call
// goes through the polyphase resampler; one at 22.05 kHz (not supported
// by it) falls back to linear interpolation and is counted. Either way
// the answer is played whole and the context matches what was heard, and
// the epoch's frames reach past its last word. (Mutation seen failing:
// unsupported rates dropped instead of converted — no audio. The filter
// tail's flush is pinned by TestResamplerTailIsFlushed.)
func TestProviderAudioAtOtherRates(t *testing.T) {
	for _, tc := range []struct {
		rate        int
		unsupported bool
	}{{24000, false}, {22050, true}, {8000, false}} {
		synctest.Test(t, func(t *testing.T) {
			s := sim.NewScenario("tts-rate").Silence(500*time.Millisecond).Speak("Hello there.", time.Second).Silence(4 * time.Second)
			tts := providertest.NewMockTTS(providertest.TTSConfig{Rate: tc.rate})
			r, err := (&sim.Call{
				Scenario: s, Linger: 2 * time.Second,
				STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
				LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "We open at nine in the morning."}),
				TTS: tts,
			}).Run()
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.CheckInvariants(r, 0); err != nil {
				t.Fatalf("rate %d: %v", tc.rate, err)
			}
			var pacer *messages.Description
			for _, ch := range r.Tree.Children {
				if ch.Name == string(messages.StagePacer) {
					pacer = ch
				}
			}
			if pacer.Counters["resampled_chunks"] == 0 || (pacer.Counters["resample_unsupported"] > 0) != tc.unsupported {
				t.Fatalf("rate %d: pacer counters %v", tc.rate, pacer.Counters)
			}
			// The epoch's frames cover the synthesizer's audio: its words
			// end inside the played audio.
			frames := 0
			for _, rec := range r.Records {
				if rec.Kind == sim.RecordAudio && rec.Epoch == 1 {
					frames++
				}
			}
			words := r.Words[1]
			last := words[len(words)-1].Offset
			if played := time.Duration(frames) * messages.FrameDuration; played <= last {
				t.Fatalf("rate %d: %v of audio played, the last word starts at %v", tc.rate, played, last)
			}
		})
	}
}
