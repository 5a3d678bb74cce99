package sim

import (
	"testing"
	"testing/synctest"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
)

// panicOnFirstFrame makes a stage panic on the first audio frame it sees.
func panicOnFirstFrame(next actor.ReceiverFunc) actor.ReceiverFunc {
	done := false
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if _, ok := env.Message.(*messages.AudioFrame); ok && !done {
			done = true
			panic("injected panic")
		}
		next(c, env)
	}
}

// TestCallsAreIsolated runs three calls on one node (one actor system, one
// switchboard): two healthy ones and one whose vad panics and whose STT and
// TTS disconnect. The healthy calls give exactly the fingerprints they give
// alone, and the faulty one recovers and keeps every invariant. (Mutation
// seen failing: state shared between calls — the turn actor's epoch
// counter made a package variable — changes the healthy calls' epochs.)
func TestCallsAreIsolated(t *testing.T) {
	byName := map[string]Case{}
	for _, c := range Scenarios() {
		byName[c.Name] = c
	}
	healthy := []Case{byName["s02_barge_in"], byName["s09_back_to_back_turns"]}
	faulty := func() *Call {
		c := byName["s11_tts_disconnect_mid_answer"].Build()
		c.STT.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 1})
		configure(c, func(cfg *session.Config) {
			cfg.Taps = map[messages.Stage]actor.ReceiverMiddleware{messages.StageVAD: panicOnFirstFrame}
		})
		return c
	}
	synctest.Test(t, func(t *testing.T) {
		alone := make([]string, len(healthy))
		for i, c := range healthy {
			r, err := c.Build().Run()
			if err != nil {
				t.Fatal(err)
			}
			alone[i] = r.Fingerprint()
		}
		calls := []*Call{healthy[0].Build(), faulty(), healthy[1].Build()}
		rs, errs := RunTogether(calls...)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		for i, c := range healthy {
			r := rs[[]int{0, 2}[i]]
			if got := r.Fingerprint(); got != alone[i] {
				t.Errorf("%s beside a failing call: fingerprint %s, alone %s", c.Name, got, alone[i])
			}
			if err := CheckInvariants(r, c.Slack); err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
		}
		bad := rs[1]
		if err := CheckInvariants(bad, 1); err != nil {
			t.Errorf("the faulty call: %v", err)
		}
		for _, s := range []messages.Stage{messages.StageVAD, messages.StageSTT, messages.StageTTS} {
			if bad.Ended.Restarts[s] != 1 {
				t.Errorf("the faulty call restarted %s %d times, want 1", s, bad.Ended.Restarts[s])
			}
		}
		if bad.Turns() != 2 {
			t.Errorf("the faulty call answered %d turns, want 2", bad.Turns())
		}
	})
}
