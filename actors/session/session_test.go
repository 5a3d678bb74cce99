package session_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the calls run in
// synctest bubbles, which check their own; this catches what runs outside).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const answer = "Of course, what is the new address?"

// call is one utterance from 0.5 s to 2 s, answered once.
func call(name string, during ...sim.Action) *sim.Call {
	s := sim.NewScenario(name).Silence(500*time.Millisecond).
		Speak("I need to change my delivery address please.", 1500*time.Millisecond).
		Silence(4 * time.Second)
	return &sim.Call{
		Scenario: s,
		Linger:   3 * time.Second,
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
		LLM:      providertest.NewMockLLM(providertest.LLMConfig{}, providertest.Response{Text: answer}),
		TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
		During:   during,
	}
}

// assistantSaid reports whether an assistant message of the context is text.
func assistantSaid(c *agent.Context, text string) bool {
	if c == nil {
		return false
	}
	for i := 0; i < c.Len(); i++ {
		if m := c.At(i); m.Role == agent.RoleAssistant && m.Text == text {
			return true
		}
	}
	return false
}

// request sends msg to the call's session and checks the answer's type.
func request[T any](t *testing.T, h *sim.Handle, msg any) T {
	t.Helper()
	v, err := h.Request(msg)
	if err != nil {
		t.Errorf("request %T: %v", msg, err)
		var zero T
		return zero
	}
	got, ok := v.(T)
	if !ok {
		t.Errorf("request %T: answer %T (%v), want %T", msg, v, v, *new(T))
	}
	return got
}

// Mutation caught: finishGather not sorting the children (they come in
// answer order, downstream first) or the gather finishing before every
// stage answered (fewer than 8 children or an "unresponsive" one).
func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		at   time.Duration
	}{
		{name: "before speech", at: 200 * time.Millisecond},
		{name: "while the caller speaks", at: 1200 * time.Millisecond},
		{name: "while the bot answers", at: 3200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var tree *messages.Description
				c := call("describe", sim.Action{At: tt.at, Do: func(h *sim.Handle) {
					tree = request[*messages.Description](t, h, &messages.Describe{})
				}})
				if _, err := c.Run(); err != nil {
					t.Fatalf("run: %v", err)
				}
				if tree == nil {
					t.Fatal("no description")
				}
				var names []string
				for _, ch := range tree.Children {
					names = append(names, ch.Name)
					if ch.State == "" || ch.State == "unresponsive" {
						t.Errorf("stage %s: state %q", ch.Name, ch.State)
					}
				}
				var want []string
				for _, s := range messages.Stages() {
					want = append(want, string(s))
				}
				if !slices.Equal(names, want) {
					t.Errorf("children %v, want %v", names, want)
				}
			})
		})
	}
}

// Mutation caught: operatorRestart not restarting the child (the stt case
// sees one connect), or not counting it in opRestarts; a restart that
// breaks the call fails the answer and invariant checks.
func TestOperatorRestartEachStage(t *testing.T) {
	// Stages whose operator restart is known to break the call, with why.
	// Keep the case: it runs again once the bug is fixed.
	broken := map[messages.Stage]string{}
	for _, st := range messages.Stages() {
		t.Run(string(st), func(t *testing.T) {
			if why, ok := broken[st]; ok {
				t.Skip(why)
			}
			synctest.Test(t, func(t *testing.T) {
				var res *messages.RestartResult
				c := call("restart-"+string(st), sim.Action{At: 1200 * time.Millisecond, Do: func(h *sim.Handle) {
					res = request[*messages.RestartResult](t, h, &messages.Restart{Stage: st})
				}})
				r, err := c.Run()
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if res == nil || res.Err != nil {
					t.Fatalf("restart %s: %+v", st, res)
				}
				if !assistantSaid(r.Context, answer) {
					t.Errorf("the call was not answered after the restart; context %+v", contextText(r.Context))
				}
				if st == messages.StageSTT && r.STTConnects != 2 {
					t.Errorf("%d stt connects, want 2 (the restart reconnects)", r.STTConnects)
				}
				if r.Stats.OperatorRestarts != 1 {
					t.Errorf("OperatorRestarts = %d, want 1", r.Stats.OperatorRestarts)
				}
				for _, other := range messages.Stages() {
					want := 0
					if other == st {
						want = 1
					}
					if got := r.Stats.Restarts[other]; got != want {
						t.Errorf("Restarts[%s] = %d, want %d", other, got, want)
					}
				}
				if err := sim.CheckInvariants(r, 1); err != nil {
					t.Errorf("invariants: %v", err)
				}
			})
		})
	}
}

func contextText(c *agent.Context) []string {
	var out []string
	for i := 0; c != nil && i < c.Len(); i++ {
		m := c.At(i)
		out = append(out, fmt.Sprintf("%s: %q", m.Role, m.Text))
	}
	return out
}

// Mutation caught: operatorRestart without its unknown-stage check (the
// session dereferences a nil stage and never answers).
func TestOperatorRestartRejected(t *testing.T) {
	tests := []struct {
		name  string
		stage messages.Stage
	}{
		{name: "unknown stage", stage: "nope"},
		{name: "empty stage", stage: ""},
		{name: "session is not a stage", stage: "session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var res *messages.RestartResult
				c := call("restart-unknown", sim.Action{At: time.Second, Do: func(h *sim.Handle) {
					res = request[*messages.RestartResult](t, h, &messages.Restart{Stage: tt.stage})
				}})
				r, err := c.Run()
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if res == nil || res.Err == nil {
					t.Fatalf("restart %q: %+v, want an error", tt.stage, res)
				}
				if r.Stats.OperatorRestarts != 0 {
					t.Errorf("OperatorRestarts = %d, want 0", r.Stats.OperatorRestarts)
				}
				if err := sim.CheckInvariants(r, 1); err != nil {
					t.Errorf("invariants: %v", err)
				}
			})
		})
	}
}

// Mutation caught: HandleFailure giving up at the first failure
// (len(st.failures) > 0 instead of > MaxRestarts) instead of restarting the
// stage, and the delayed restart never done (restartDue ignored): no
// reconnect, no answer.
func TestProviderFailureRestartsOnlyItsStage(t *testing.T) {
	tests := []struct {
		name   string
		stage  messages.Stage
		inject func(c *sim.Call)
	}{
		{name: "stt disconnect", stage: messages.StageSTT, inject: func(c *sim.Call) {
			c.STT.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 1})
		}},
		{name: "stt protocol error", stage: messages.StageSTT, inject: func(c *sim.Call) {
			c.STT.Inject(providertest.Fault{Kind: providertest.FaultProtocol, BeforeEvent: 1})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := call("stt-fault")
				tt.inject(c)
				r, err := c.Run()
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				for _, st := range messages.Stages() {
					got := r.Stats.Restarts[st]
					if st == tt.stage && got < 1 {
						t.Errorf("Restarts[%s] = %d, want >= 1", st, got)
					}
					if st != tt.stage && got != 0 {
						t.Errorf("Restarts[%s] = %d, want 0", st, got)
					}
				}
				if r.Stats.GaveUp != "" {
					t.Errorf("GaveUp = %q, want none", r.Stats.GaveUp)
				}
				if r.STTConnects < 2 {
					t.Errorf("%d stt connects, want a reconnect", r.STTConnects)
				}
				if !assistantSaid(r.Context, answer) {
					t.Errorf("the call was not answered after the failure; context %v", contextText(r.Context))
				}
				if err := sim.CheckInvariants(r, 1); err != nil {
					t.Errorf("invariants: %v", err)
				}
			})
		})
	}
}

// Mutation caught: HandleFailure never giving up (the MaxRestarts check
// removed): the sixth connect succeeds and the call ends by the hang-up.
func TestRepeatedFailureEndsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := call("stt-gives-up")
		for range 5 {
			c.STT.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: 503})
		}
		r, err := c.Run()
		if r == nil {
			t.Fatalf("run returned no result: %v", err)
		}
		if err != nil {
			t.Logf("run: %v", err)
		}
		if r.Ended.Err == nil || r.Ended.GaveUp != messages.StageSTT {
			t.Errorf("call ended %+v, want an error and GaveUp stt", r.Ended)
		}
		if n := r.Ended.Restarts[messages.StageSTT]; n != 3 {
			t.Errorf("stt restarted %d times before the call gave up, want 3 (MaxRestarts)", n)
		}
		// Every failure is counted by its kind, the last one included.
		// Mutation caught: the kind taken before the unwrapping (the
		// actor's "stt connect: %w" wrapper: other).
		if got := r.Ended.Failures[messages.StageSTT]; len(got) != 1 || got[providers.KindRejected] != 4 {
			t.Errorf("stt failures by kind %v, want 4 rejected", got)
		}
		// The closing line was spoken before the end (the STT is not
		// needed to speak).
		if !strings.Contains(strings.Join(r.Spoken, ""), "technical trouble") {
			t.Errorf("the end line was not spoken: %q", r.Spoken)
		}
		if want := "stage stt failed"; r.Ended.Reason != want {
			t.Errorf("end reason %q, want %q", r.Ended.Reason, want)
		}
	})
}

// TestCallerAudioSurvivesSTTRestarts: the STT refuses two connects while
// the caller speaks (each a restart of the stt actor after a backoff), then
// connects slowly. Every frame the caller sent still reaches the provider:
// the backlog outlives the restarts. (Mutation seen failing: the backlog
// held by each incarnation and released at its restart.)
func TestCallerAudioSurvivesSTTRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := call("stt-backlog")
		c.STT = providertest.NewMockSTT(providertest.STTConfig{ConnectLatency: 200 * time.Millisecond}, c.Scenario.Utterances())
		c.STT.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: 503})
		c.STT.Inject(providertest.Fault{Kind: providertest.FaultReject, Status: 503})
		r, err := c.Run()
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if r.STTConnects != 3 || r.Ended.Restarts[messages.StageSTT] != 2 {
			t.Fatalf("stt connects %d, restarts %d; want 3 and 2", r.STTConnects, r.Ended.Restarts[messages.StageSTT])
		}
		if !assistantSaid(r.Context, answer) {
			t.Errorf("not answered: %q", contextText(r.Context))
		}
	})
}

// TestSTTDiesWhileFinalizing: the STT session dies just when the final of
// the caller's utterance is due. The turn must not wait for a final that
// will never come: it ends with the last interim, and the call is
// answered. (Mutation seen failing: the stt actor's restart not telling
// the turn with SttFailed — the caller is never answered.)
func TestSTTDiesWhileFinalizing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := call("stt-final-lost")
		// 1.5 s of speech gives 7 interims (events 0 to 6); event 7 is the
		// final that answers the finalize.
		c.STT.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 7})
		r, err := c.Run()
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if !assistantSaid(r.Context, answer) {
			t.Fatalf("not answered: %q", contextText(r.Context))
		}
		if r.Ended.Restarts[messages.StageSTT] != 1 {
			t.Errorf("stt restarts %d, want 1", r.Ended.Restarts[messages.StageSTT])
		}
	})
}

// TestOperatorRestartStorm: an operator's restarts of one stage count
// toward its supervision limit like failures, so a storm of them ends the
// call cleanly (the restart past the limit is refused with
// ErrRestartLimit and the call ends as "stage stt restarted too often")
// instead of restarting the stage for ever. Mutation caught: the
// operator's restarts not recorded in the stage's window (all five
// succeed and the call goes on).
func TestOperatorRestartStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var results []*messages.RestartResult
		storm := sim.Action{At: 1200 * time.Millisecond, Do: func(h *sim.Handle) {
			for range 5 {
				v, err := h.Request(&messages.Restart{Stage: messages.StageSTT})
				if err != nil {
					break
				}
				res, _ := v.(*messages.RestartResult)
				results = append(results, res)
				if res == nil || res.Err != nil {
					break
				}
			}
		}}
		r, err := call("restart-storm", storm).Run()
		if !errors.Is(err, sim.ErrCallFailed) || r == nil {
			t.Fatalf("run: %v, want the call ended before its script", err)
		}
		if len(results) != 4 {
			t.Fatalf("%d answers, want 3 restarts and a refusal: %+v", len(results), results)
		}
		for i, res := range results[:3] {
			if res.Err != nil {
				t.Errorf("restart %d: %v", i+1, res.Err)
			}
		}
		if !errors.Is(results[3].Err, session.ErrRestartLimit) {
			t.Errorf("restart 4: %v, want ErrRestartLimit", results[3].Err)
		}
		if r.Ended.Reason != "stage stt restarted too often" || r.Ended.GaveUp != messages.StageSTT {
			t.Errorf("ended %q (gave up %q), want the stt stage's restart limit", r.Ended.Reason, r.Ended.GaveUp)
		}
	})
}
