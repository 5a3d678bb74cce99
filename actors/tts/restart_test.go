package tts_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

const (
	firstAnswer  = "Of course. Please tell me the new street and the postcode."
	secondAnswer = "Thanks. Anything else?"
)

// panicOnDelta makes the tts stage panic once, before its Receive, on a
// TextDelta: the n-th delta (from 1) of the answer'th answer (from 1), the
// answers told apart by their epochs. The tap stands where the chaos
// suite's stands: after the stage's own middleware, before Receive.
func panicOnDelta(answer, n int) actor.ReceiverMiddleware {
	var last messages.Epoch
	answers, deltas, fired := 0, 0, false
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			if d, ok := env.Message.(*messages.TextDelta); ok && !fired {
				if d.Epoch != last {
					last, answers, deltas = d.Epoch, answers+1, 0
				}
				deltas++
				if answers == answer && deltas == n {
					fired = true
					panic("injected panic")
				}
			}
			next(c, env)
		}
	}
}

// TestPanicOnAnAnswersDelta: a tts panic on one of an answer's deltas
// (the answer's first one included) restarts the stage, and the answer it
// held fails as a whole from there: the caller hears no word of it that
// the context does not hold and the context holds no word the caller did
// not hear (context == heard, exactly: sim.CheckInvariants with no slack),
// the pacer is told the epoch failed (tts_failures), and the next answer
// plays in full and is in the context in full.
//
// Mutations caught (each seen failing, in both first-delta cases):
// failAll closing only a.cur's epoch, not the epoch of the message that
// failed (the handling record not read at the restart); recordEpoch put
// behind the other middleware (the tap panics before it records the
// epoch). The restarted stage then speaks the answer without
// its first delta while the llm cuts the context by word count from the
// answer's start: "context is not a prefix of heard" (the chaos suite's
// c0038-1, seed 1).
func TestPanicOnAnAnswersDelta(t *testing.T) {
	tests := []struct {
		name      string
		answer, n int
	}{
		{"first delta of the first answer", 1, 1},
		{"first delta of the second answer", 2, 1},
		{"second delta of the first answer", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := sim.NewScenario("tts-delta-panic").Silence(500*time.Millisecond).
					Speak("I need to change my delivery address please.", 1500*time.Millisecond).
					Silence(7500*time.Millisecond).Speak("Yes, that is all.", 1000*time.Millisecond).Silence(3 * time.Second)
				responses := []providertest.Response{{Text: firstAnswer}, {Text: secondAnswer}}
				if tt.answer == 2 {
					// The panic is on the second answer: a third turn
					// checks that the call still answers after it.
					s.Silence(time.Second).Speak("Goodbye.", 600*time.Millisecond).Silence(3 * time.Second)
					responses = append(responses, providertest.Response{Text: "Goodbye."})
				}
				r, err := (&sim.Call{
					Scenario: s, Linger: 2 * time.Second,
					STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
					LLM: providertest.NewMockLLM(providertest.LLMConfig{}, responses...),
					TTS: providertest.NewMockTTS(providertest.TTSConfig{Paced: true}),
					Configure: func(cfg *session.Config) {
						cfg.Taps = map[messages.Stage]actor.ReceiverMiddleware{messages.StageTTS: panicOnDelta(tt.answer, tt.n)}
					},
				}).Run()
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if err := sim.CheckInvariants(r, 0); err != nil {
					t.Error(err)
				}
				if n := r.Ended.Restarts[messages.StageTTS]; n != 1 {
					t.Errorf("tts restarted %d times, want 1", n)
				}
				if n := counter(r, messages.StagePacer, "tts_failures"); n != 1 {
					t.Errorf("pacer saw %d failed epochs, want 1", n)
				}
				got := said(r)
				epochs := r.TurnEpochs()
				if len(got) != len(responses) || len(epochs) != len(responses) {
					t.Fatalf("context per turn %q over %d turns, want %d turns", got, len(epochs), len(responses))
				}
				failed := tt.answer - 1
				if tt.n == 1 && got[failed] != "" {
					t.Errorf("answer %d failed on its first delta, yet the context holds %q of it", tt.answer, got[failed])
				}
				if tt.n == 1 && len(r.PlayedWords(epochs[failed])) != 0 {
					t.Errorf("answer %d failed on its first delta, yet the caller heard %q", tt.answer, r.PlayedWords(epochs[failed]))
				}
				// Every other answer plays in full and is in the context.
				for i, resp := range responses {
					if i == failed {
						continue
					}
					if got[i] != resp.Text {
						t.Errorf("turn %d: the context holds %q, want the whole answer %q", i, got[i], resp.Text)
					}
					if played := r.PlayedWords(epochs[i]); !slices.Equal(played, strings.Fields(resp.Text)) {
						t.Errorf("turn %d: the caller heard %q, want the whole answer", i, played)
					}
				}
			})
		})
	}
}

// cancelFails is a TTS whose sessions refuse to cancel context id: the
// provider failure a superseded context meets.
type cancelFails struct {
	providers.TTS
	id string
}

func (c cancelFails) Connect(ctx context.Context) (providers.TTSSession, error) {
	s, err := c.TTS.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return cancelFailsSession{TTSSession: s, id: c.id}, nil
}

type cancelFailsSession struct {
	providers.TTSSession
	id string
}

func (s cancelFailsSession) Cancel(id string) error {
	if id == s.id {
		return errors.New("cancel refused")
	}
	return s.TTSSession.Cancel(id)
}

// TestSupersedeFailsTheNewEpoch: a pacer restart settles the first answer
// while its provider context is still open, so the second answer's first
// delta supersedes it, and the provider refuses that cancel: the stage
// panics in Receive on the new epoch's first delta before the delta made
// it current. The second answer fails as a whole (nothing of it heard,
// nothing in the context), as the delta's loss would otherwise play the
// rest of it (mutation seen failing: the handling record not read at the
// restart, "context is not a prefix of heard").
func TestSupersedeFailsTheNewEpoch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sim.NewScenario("tts-supersede").Silence(500*time.Millisecond).
			Speak("I need to change my delivery address please.", 1500*time.Millisecond).
			Silence(2500*time.Millisecond).Speak("Yes, that is all.", 1000*time.Millisecond).Silence(3 * time.Second)
		mock := providertest.NewMockTTS(providertest.TTSConfig{Paced: true})
		r, err := (&sim.Call{
			Scenario: s, Linger: 2 * time.Second,
			STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
			LLM: providertest.NewMockLLM(providertest.LLMConfig{TokenInterval: 100 * time.Millisecond},
				providertest.Response{Text: firstAnswer}, providertest.Response{Text: secondAnswer}),
			TTS:       mock,
			Configure: func(cfg *session.Config) { cfg.TTS = cancelFails{TTS: mock, id: "e1"} },
			During: []sim.Action{{At: 3300 * time.Millisecond, Do: func(h *sim.Handle) {
				if _, err := h.Request(&messages.Restart{Stage: messages.StagePacer}); err != nil {
					t.Errorf("restart the pacer: %v", err)
				}
			}}},
		}).Run()
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Error(err)
		}
		if n := r.Ended.Restarts[messages.StageTTS]; n != 1 {
			t.Fatalf("tts restarted %d times, want 1 (the superseded cancel was not reached)", n)
		}
		got, epochs := said(r), r.TurnEpochs()
		if len(got) != 2 || len(epochs) != 2 {
			t.Fatalf("context per turn %q over %d turns, want 2", got, len(epochs))
		}
		if got[1] != "" || len(r.PlayedWords(epochs[1])) != 0 {
			t.Errorf("the second answer failed on its first delta, yet the context holds %q and the caller heard %q", got[1], r.PlayedWords(epochs[1]))
		}
	})
}
