package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
	"github.com/rs/zerolog"
)

// lockedBuffer is a log sink safe for the actors' goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTurnEvent: one debug event per answered turn with its timeline in
// milliseconds from the end of speech, and no transcript or answer text.
// (Mutations seen failing: no event; the marks measured from a point 450 ms
// after the end of speech, i.e. from the turn end.)
func TestTurnEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sink lockedBuffer
		c := call("turn-event")
		c.Log = zerolog.New(&sink).Level(zerolog.DebugLevel)
		if _, err := c.Run(); err != nil {
			t.Fatal(err)
		}
		var turns []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(line), &ev) == nil && ev["message"] == "turn" {
				turns = append(turns, ev)
			}
		}
		if len(turns) != 1 {
			t.Fatalf("%d turn events, want 1:\n%s", len(turns), sink.String())
		}
		ev := turns[0]
		for field, want := range map[string]float64{"epoch": 1, "stt_final_ms": 450, "turn_end_ms": 450, "llm_first_token_ms": 750, "tts_first_audio_ms": 950, "first_audio_out_ms": 950} {
			if ev[field] != want {
				t.Errorf("%s = %v, want %v", field, ev[field], want)
			}
		}
		for _, secret := range []string{"delivery address", answer} {
			if strings.Contains(sink.String(), secret) {
				t.Errorf("the log holds %q", secret)
			}
		}
	})
}

// TestTimelinesAreBounded: a session keeps the timelines of its newest
// MaxTimelines turns only. (Mutation seen failing: no bound — 600 kept.)
func TestTimelinesAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []session.Timeline
		c := call("timelines", sim.Action{At: time.Second, Do: func(h *sim.Handle) {
			pid := actor.NewPID(h.System.Address(), "switchboard/"+string(h.Call))
			for e := range 600 {
				h.System.Root.Send(pid, &messages.TurnMark{Epoch: messages.Epoch(1000 + e), Kind: messages.MarkTurnEnd, At: time.Now()})
			}
			got = request[[]session.Timeline](t, h, &session.GetTimelines{})
		}})
		if _, err := c.Run(); err != nil {
			t.Fatal(err)
		}
		if len(got) != session.MaxTimelines || got[0].Epoch != 1000+600-session.MaxTimelines || got[len(got)-1].Epoch != 1599 {
			t.Fatalf("%d timelines from epoch %d to %d", len(got), got[0].Epoch, got[len(got)-1].Epoch)
		}
	})
}

// TestLogContentSwitch: with the operator's debug switch on, the log
// holds what the caller said, the bot's answers as played, and the tool
// call's arguments; with it off (the default), none of them, at debug
// level too. Mutations caught: the switch not handed to the tools actor
// (no args), the bot's words not collected (empty "bot said"), the
// transcript logged with the switch off.
func TestLogContentSwitch(t *testing.T) {
	const args = `{"party":"Ada Lovelace","size":4}`
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[on], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := sim.NewScenario("log-content").Silence(500*time.Millisecond).
					Speak("Please book the table for tonight.", 1500*time.Millisecond).Silence(6 * time.Second)
				booking := agent.NewFuncTool(agent.Spec{Name: "book_table", Effect: agent.SideEffect, Timeout: 10 * time.Second},
					func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
						return agent.Output{Content: "booked"}, nil
					})
				reg, err := agent.NewRegistry(booking)
				if err != nil {
					t.Fatal(err)
				}
				var sink lockedBuffer
				c := &sim.Call{
					Scenario: s, Linger: 3 * time.Second, Tools: reg,
					STT: providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
					LLM: providertest.NewMockLLM(providertest.LLMConfig{},
						providertest.Response{Text: "One moment.", Calls: []providertest.ScriptedCall{{ID: "c1", Name: "book_table", Args: args}}},
						providertest.Response{Text: "Your table is booked for tonight."}),
					TTS: providertest.NewMockTTS(providertest.TTSConfig{}),
					Configure: func(cfg *session.Config) {
						cfg.LogContent = on
						// Live events flow as in `serve` (its metrics
						// take them for every call): off must stay off.
						cfg.OnEvent = func(messages.CallEvent) {}
					},
					Log: zerolog.New(&sink).Level(zerolog.DebugLevel),
				}
				if _, err := c.Run(); err != nil {
					t.Fatal(err)
				}
				var said, bot, traced []string
				for _, line := range strings.Split(strings.TrimSpace(sink.String()), "\n") {
					var ev map[string]any
					if json.Unmarshal([]byte(line), &ev) != nil {
						continue
					}
					switch ev["message"] {
					case "caller said":
						said = append(said, ev["text"].(string))
					case "bot said":
						bot = append(bot, ev["text"].(string))
					case "tool call settled":
						a, _ := ev["args"].(string)
						traced = append(traced, a)
					}
				}
				if !on {
					for _, secret := range []string{"book the table", "Ada Lovelace", "booked for tonight"} {
						if strings.Contains(sink.String(), secret) {
							t.Errorf("the switch is off and the log holds %q", secret)
						}
					}
					return
				}
				if len(said) != 1 || said[0] != "Please book the table for tonight." {
					t.Errorf("caller said %q", said)
				}
				if len(bot) != 1 || bot[0] != "One moment. Your table is booked for tonight." {
					t.Errorf("bot said %q", bot)
				}
				if len(traced) != 1 || traced[0] != args {
					t.Errorf("tool trace args %q, want %q", traced, args)
				}
			})
		})
	}
}
