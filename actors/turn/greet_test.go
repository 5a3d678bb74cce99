package turn_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestGreetAfterWaitsForTheCallee: an outbound call's greeting waits
// GreetAfter for the callee's first words. A silent callee hears it once
// the wait is over (not before: the mutation "After ignored" greets at
// once, and first audio comes within the first second); a callee who
// says "hello?" inside the wait gets an answer and no greeting (the
// mutation "the delayed Greet skips greet's check" speaks both).
func TestGreetAfterWaitsForTheCallee(t *testing.T) {
	const wait = 3 * time.Second
	t.Run("silent callee", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := sim.NewScenario("greet-after-silent").Silence(8 * time.Second)
			r, err := (&sim.Call{
				Scenario: s, Linger: time.Second,
				STT: providertest.NewMockSTT(providertest.STTConfig{}, nil),
				LLM: providertest.NewMockLLM(providertest.LLMConfig{}),
				TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
				Configure: func(c *session.Config) {
					c.Greeting, c.GreetAfter = "Hello, this is the clinic calling.", wait
				},
			}).Run()
			if err != nil {
				t.Fatal(err)
			}
			at, ok := r.FirstAudioAfter(r.Start)
			if !ok {
				t.Fatal("the greeting was never spoken to a silent callee")
			}
			if d := at.Sub(r.Start); d < wait || d > wait+2*time.Second {
				t.Fatalf("greeting heard %v into the call, want just after the %v wait", d, wait)
			}
		})
	})
	t.Run("callee speaks first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := sim.NewScenario("greet-after-hello").Silence(800*time.Millisecond).Speak("Hello?", 600*time.Millisecond).Silence(7 * time.Second)
			r, err := (&sim.Call{
				Scenario: s, Linger: time.Second,
				STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
				LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "Hi, this is the clinic."}),
				TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
				Configure: func(c *session.Config) {
					c.Greeting, c.GreetAfter = "Hello, this is the clinic calling.", wait
				},
			}).Run()
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.CheckInvariants(r, 0); err != nil {
				t.Fatal(err)
			}
			if n := len(r.TurnEpochs()); n != 1 {
				t.Fatalf("%d answers, want one (the reply to hello, no greeting)", n)
			}
		})
	})
}
