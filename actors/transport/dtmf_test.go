package transport_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

const ms = time.Millisecond

// TestDTMFAcrossARestart: the transport actor registers the connection's
// key receiver when it starts, again after a restart, and unregisters it
// when it stops: a key before and keys after an operator restart of the
// transport make one turn, the stage's count of keys survives the
// restart, and a key pressed after the call reaches nobody. Mutations
// caught (each seen failing): stop not unregistering (the key after the
// call is heard), the receiver registered only by the first actor (the
// keys after the restart are lost: no turn).
func TestDTMFAcrossARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kp := &sim.Keypad{}
		var restartErr error
		restart := sim.Action{At: 1500 * ms, Do: func(h *sim.Handle) {
			v, err := h.Request(&messages.Restart{Stage: messages.StageTransport})
			if err == nil {
				err = v.(*messages.RestartResult).Err
			}
			restartErr = err
		}}
		during := append(kp.Press(time.Second, 0, "1"), restart)
		during = append(during, kp.Press(2*time.Second, 300*ms, "2#")...)
		s := sim.NewScenario("keys-restart").Silence(6 * time.Second)
		r, err := (&sim.Call{
			Scenario: s, Linger: 2 * time.Second,
			STT:      providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
			LLM:      providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: "Thank you."}),
			TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
			WrapConn: kp.Wrap,
			During:   during,
			Configure: func(c *session.Config) {
				c.Turn.DTMF.Terminator = '#'
			},
		}).Run()
		if err != nil {
			t.Fatal(err)
		}
		if restartErr != nil {
			t.Fatalf("restart: %v", restartErr)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		var users []string
		for i := 0; i < r.Context.Len(); i++ {
			if m := r.Context.At(i); m.Role == agent.RoleUser {
				users = append(users, m.Text)
			}
		}
		if !slices.Equal(users, []string{"The caller pressed 1 2 #"}) {
			t.Fatalf("turns %q", users)
		}
		i := slices.IndexFunc(r.Tree.Children, func(d *messages.Description) bool { return d.Name == string(messages.StageTransport) })
		if i < 0 {
			t.Fatal("no transport in the tree")
		}
		if c := r.Tree.Children[i]; c.Counters["dtmf"] != 3 || c.Restarts != 1 {
			t.Fatalf("transport: %d keys over %d restarts, want 3 over 1", c.Counters["dtmf"], c.Restarts)
		}
		kp.Press(0, 0, "9")[0].Do(nil) // the call is over
		if pressed, unheard := kp.Pressed(); pressed != 4 || unheard != 1 {
			t.Fatalf("%d keys pressed, %d unheard; want the one after the call unheard", pressed, unheard)
		}
	})
}
