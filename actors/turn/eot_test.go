package turn_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/turn"
	"github.com/brisvox/brisvox/agent/endofturn"
	"github.com/brisvox/brisvox/media/eot"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// failing is a turn model that cannot answer.
type failing struct{}

func (failing) Complete(context.Context, []int16) (float32, error) {
	return 0, errors.New("model file missing")
}

// TestEndOfTurnModel: with the end-of-turn model in charge, a pause the
// model calls complete ends the turn as soon as the final is in (first
// audio 950 ms after the end of speech, as without any delay), a doubtful
// pause waits the policy's delay for its estimate (p 0.1: 1.2 s, so 1.7 s
// to first audio), and a model that fails waits the longest delay (1.5 s:
// 2 s). The model hears at most the last 8 s at 16 kHz. (Mutations seen
// failing: the estimate ignored — every pause waits 1.5 s; the delay
// counted from the estimate's arrival instead of the end of speech — the
// doubtful pause waits 450 ms longer.)
func TestEndOfTurnModel(t *testing.T) {
	cases := []struct {
		name  string
		model func() session.Config
		want  time.Duration
	}{
		{"complete", nil, 950 * time.Millisecond},
		{"doubtful", nil, 1700 * time.Millisecond},
		{"failing", nil, 2000 * time.Millisecond},
	}
	for _, tc := range cases {
		synctest.Test(t, func(t *testing.T) {
			var fixed *eot.Fixed
			s := sim.NewScenario("eot-"+tc.name).Silence(9*time.Second).Speak("Book a table for two.", 1500*time.Millisecond).Silence(4 * time.Second)
			r, err := (&sim.Call{
				Scenario: s, Linger: 2 * time.Second,
				STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
				LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "For what time?"}),
				TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
				Configure: func(c *session.Config) {
					c.Turn.EndOfTurn = &endofturn.PolicyConfig{}
					switch tc.name {
					case "complete":
						fixed = eot.NewFixed(0.9)
						c.TurnModel = fixed
					case "doubtful":
						fixed = eot.NewFixed(0.1)
						c.TurnModel = fixed
					default:
						c.TurnModel = failing{}
					}
				},
			}).Run()
			if err != nil {
				t.Fatal(err)
			}
			if err := sim.CheckInvariants(r, 0); err != nil {
				t.Fatal(err)
			}
			if got := r.FirstAudios(); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("%s: first audio %v after the end of speech, want %v", tc.name, got, tc.want)
			}
			if fixed != nil {
				if calls := fixed.Calls(); len(calls) != 1 || calls[0] != 8*16000 {
					t.Fatalf("%s: model heard %v samples, want one question over the last 8 s at 16 kHz", tc.name, calls)
				}
			}
		})
	}
}

// TestEndOfTurnModelKeepsAPauseInTheTurn: a doubtful pause (p 0.1, a
// 1.2 s wait) in which the caller goes on is not a turn end: one turn
// with both parts. Under the energy VAD alone with no delay the pause
// would have ended the turn. (Mutation seen failing: the turn ended at
// the final regardless of the policy — two turns.)
func TestEndOfTurnModelKeepsAPauseInTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sim.NewScenario("eot-pause").Silence(500*time.Millisecond).Speak("I would like to book", time.Second).
			Silence(900*time.Millisecond).Speak("a table for two.", time.Second).Silence(4 * time.Second)
		r, err := (&sim.Call{
			Scenario: s, Linger: 2 * time.Second,
			STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
			LLM: providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "For what time?"}, providertest.Response{Text: "Again?"}),
			TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
			Configure: func(c *session.Config) {
				c.Turn.EndOfTurn = &endofturn.PolicyConfig{}
				c.TurnModel = eot.NewFixed(0.1)
			},
		}).Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if n := len(r.TurnEpochs()); n != 1 {
			t.Fatalf("%d turns, want the pause kept inside one", n)
		}
	})
}

// TestEndOfTurnConfig: the model and a fixed delay together are refused,
// and so is a policy without a model.
func TestEndOfTurnConfig(t *testing.T) {
	if err := (turn.Config{EndOfTurn: &endofturn.PolicyConfig{}, EndOfTurnDelay: time.Second}).Validate(); !errors.Is(err, turn.ErrInvalidConfig) {
		t.Errorf("model and fixed delay: %v", err)
	}
	if err := (turn.Config{EndOfTurn: &endofturn.PolicyConfig{}, Speculate: true}).Validate(); err != nil {
		t.Errorf("speculation with the model's delay: %v", err)
	}
}
