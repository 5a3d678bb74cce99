package sim_test

import (
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// TestKeypadCall: a whole call in which the caller says nothing and
// presses 4, 2 and #: the model gets "The caller pressed 4 2 #" as the
// caller's turn, its answer plays to the end, and the call keeps every
// invariant. Mutation caught (seen failing): the keypad's connection not
// a DTMF receiver (OnDTMF renamed: no key reaches the engine, no turn).
func TestKeypadCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const answer = "Table forty two is booked for you."
		kp := &sim.Keypad{}
		s := sim.NewScenario("keypad").Silence(6 * time.Second)
		llm := providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: answer})
		r, err := (&sim.Call{
			Scenario: s, Linger: 2 * time.Second,
			STT:      providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
			LLM:      llm,
			TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
			WrapConn: kp.Wrap,
			During:   kp.Press(time.Second, 400*time.Millisecond, "42#"),
			Configure: func(c *session.Config) {
				c.Turn.DTMF.Terminator = '#'
			},
		}).Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if pressed, unheard := kp.Pressed(); pressed != 3 || unheard != 0 {
			t.Fatalf("%d keys pressed, %d unheard", pressed, unheard)
		}
		reqs := llm.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d model requests, want 1", len(reqs))
		}
		msgs := reqs[0].Messages
		if last := msgs[len(msgs)-1]; last.Role != agent.RoleUser || last.Text != "The caller pressed 4 2 #" {
			t.Fatalf("the model was asked %s %q", last.Role, last.Text)
		}
		epochs := r.TurnEpochs()
		if len(epochs) != 1 {
			t.Fatalf("%d turns, want 1", len(epochs))
		}
		if got := strings.Join(r.PlayedWords(epochs[0]), " "); got != answer {
			t.Fatalf("the caller heard %q, want %q", got, answer)
		}
		if got := sim.SaidPerTurn(r.Context); !slices.Equal(got[0], strings.Fields(answer)) {
			t.Fatalf("context %v", got)
		}
	})
}
