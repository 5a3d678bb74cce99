package turn_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/turn"
	"github.com/brisvox/brisvox/agent/endofturn"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// byText is the keyless agent's end of turn: no model, the transcript
// decides, a finished one at once, one left hanging after a second.
func byText(c *session.Config) {
	c.Turn.EndOfTurn = &endofturn.PolicyConfig{MinDelay: 0, MaxDelay: time.Second}
	c.Turn.EndOfTurnByText = true
}

// TestEndOfTurnByText: a turn whose words read as finished ends as soon
// as its final is in (first audio 950 ms after the end of speech, as with
// no delay at all), and a pause after words left hanging ("a table for")
// is kept inside the turn when the caller goes on within the second it
// waits: one turn with both parts. Mutations seen failing: the transcript
// not read (every pause waits MaxDelay) -> both answer at 1.5 s; every
// transcript read as finished -> the hanging pause ends the turn, two
// turns.
func TestEndOfTurnByText(t *testing.T) {
	cases := []struct {
		name      string
		scenario  *sim.Scenario
		turns     int
		wantFirst time.Duration // of the first answer
	}{
		{
			name:     "finished",
			scenario: sim.NewScenario("text-finished").Silence(500*time.Millisecond).Speak("What time is it?", time.Second).Silence(4 * time.Second),
			turns:    1, wantFirst: 950 * time.Millisecond,
		},
		{
			name: "hanging pause",
			scenario: sim.NewScenario("text-hanging").Silence(500*time.Millisecond).Speak("I would like a table for", time.Second).
				Silence(700*time.Millisecond).Speak("two people.", time.Second).Silence(4 * time.Second),
			turns: 1, wantFirst: 950 * time.Millisecond,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := tc.scenario
				r, err := (&sim.Call{
					Scenario: s, Linger: 2 * time.Second,
					STT:       providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
					LLM:       providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "Sure."}, providertest.Response{Text: "Again?"}),
					TTS:       providertest.NewMockTTS(providertest.TTSConfig{}),
					Configure: byText,
				}).Run()
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckInvariants(r, 0); err != nil {
					t.Fatal(err)
				}
				if n := len(r.TurnEpochs()); n != tc.turns {
					t.Fatalf("%d turns, want %d", n, tc.turns)
				}
				if got := r.FirstAudios(); len(got) != 1 || got[0] != tc.wantFirst {
					t.Fatalf("first audio %v after the end of speech, want %v", got, tc.wantFirst)
				}
			})
		})
	}
}

// TestEndOfTurnByTextConfig: the text estimate needs the policy.
func TestEndOfTurnByTextConfig(t *testing.T) {
	if err := (turn.Config{EndOfTurnByText: true}).Validate(); !errors.Is(err, turn.ErrInvalidConfig) {
		t.Errorf("by text without a policy: %v", err)
	}
	if err := (turn.Config{EndOfTurn: &endofturn.PolicyConfig{}, EndOfTurnByText: true, Speculate: true}).Validate(); err != nil {
		t.Errorf("by text with the policy and speculation: %v", err)
	}
}
