package turn_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/actors/turn"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

const ms = time.Millisecond

// longAnswer plays for about 4 s (the mock TTS: 120 ms + 20 ms per rune
// per word).
const longAnswer = "Welcome to the booking line of the little harbour restaurant, how can I help you today?"

// press is a run of keys: one every gap from at.
type press struct {
	at, gap time.Duration
	keys    string
}

// keyCall is a simulated call whose caller presses keys.
type keyCall struct {
	scen    *sim.Scenario
	presses []press
	dtmf    turn.DTMFConfig
	// talk: the caller says hello at 0.5 s and the bot answers with
	// longAnswer, from about 2 s to 6 s (the scenario is then this).
	talk bool
	// turn adjusts the rest of the turn config.
	turn func(*turn.Config)
	// responses, when set, are the model's answers.
	responses []providertest.Response
	// onEvent, when set, receives the call's live events.
	onEvent func(messages.CallEvent)
	// also runs after the presses are scheduled (more actions, in order).
	also []sim.Action
}

func (c keyCall) run(t *testing.T) (*sim.Result, *providertest.MockLLM, error) {
	t.Helper()
	scen := c.scen
	switch {
	case c.talk:
		scen = sim.NewScenario("keys-talk").Silence(500*ms).Speak("Hello there", 600*ms).Silence(9 * time.Second)
	case scen == nil:
		scen = sim.NewScenario("keys").Silence(8 * time.Second)
	}
	kp := &sim.Keypad{}
	var during []sim.Action
	for _, p := range c.presses {
		during = append(during, kp.Press(p.at, p.gap, p.keys)...)
	}
	during = append(during, c.also...)
	slices.SortStableFunc(during, func(a, b sim.Action) int { return int(a.At - b.At) })
	responses := []providertest.Response{{Text: "Noted."}, {Text: "Noted again."}, {Text: "And again."}}
	if c.talk {
		responses[0].Text = longAnswer
	}
	if c.responses != nil {
		responses = c.responses
	}
	llm := providertest.NewMockLLM(providertest.LLMConfig{}, responses...)
	r, err := (&sim.Call{
		Scenario: scen, Linger: 3 * time.Second,
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, scen.Utterances()),
		LLM:      llm,
		TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
		WrapConn: kp.Wrap,
		During:   during,
		Configure: func(cfg *session.Config) {
			cfg.Turn.DTMF = c.dtmf
			if c.turn != nil {
				c.turn(&cfg.Turn)
			}
			cfg.OnEvent = c.onEvent
		},
	}).Run()
	if pressed, unheard := kp.Pressed(); err == nil && (unheard != 0 || pressed == 0 && len(c.presses) > 0) {
		t.Fatalf("%d of %d key presses found no receiver", unheard, pressed)
	}
	return r, llm, err
}

// userTexts are the caller's turns in the model's context.
func userTexts(c *agent.Context) []string {
	var out []string
	for i := 0; i < c.Len(); i++ {
		if m := c.At(i); m.Role == agent.RoleUser {
			out = append(out, m.Text)
		}
	}
	return out
}

// turnWaits is, per ended turn, the time from the end of the caller's
// input (the last key or the end of speech) to the turn's end.
func turnWaits(r *sim.Result) []time.Duration {
	var out []time.Duration
	for _, tl := range r.Timelines {
		end, ok := tl.Marks[messages.MarkTurnEnd]
		if !ok {
			continue
		}
		out = append(out, end.Sub(tl.Marks[messages.MarkVADStop]))
	}
	return out
}

// counters reads a stage's counters from the call's tree.
func counters(t *testing.T, r *sim.Result, st messages.Stage) map[string]uint64 {
	t.Helper()
	if r.Tree == nil {
		t.Fatal("the call was not probed")
	}
	for _, c := range r.Tree.Children {
		if c.Name == string(st) {
			return c.Counters
		}
	}
	t.Fatalf("no %s in the tree", st)
	return nil
}

// TestDTMF: what key presses do, through the whole call (the keypad's
// presses go through the transport actor to the turn actor, the turns to
// the mock model, whose answers play). Each case names the mutation it
// catches; each was seen failing with it.
func TestDTMF(t *testing.T) {
	cases := []struct {
		name string
		call keyCall
		// users are the caller's turns the model got; waits, when set, the
		// time from the end of the caller's input to each turn's end.
		users      []string
		waits      []time.Duration
		interrupts int
		// unanswered counts the turns cut before their answer's audio.
		unanswered int
		turnCount  map[string]uint64
		transport  map[string]uint64
	}{
		{
			// Mutation: the inter-digit timer armed once, at the first
			// key (the turn ends 1.5 s after the last key, not 2 s).
			name:  "inter-digit timeout",
			call:  keyCall{presses: []press{{time.Second, 500 * ms, "42"}}},
			users: []string{"The caller pressed 4 2"}, waits: []time.Duration{2 * time.Second},
			turnCount: map[string]uint64{"dtmf": 2, "dtmf_turns": 1, "turns": 1, "digits_pending": 0},
			transport: map[string]uint64{"dtmf": 2},
		},
		{
			// Mutation: the terminator not checked (the turn waits the
			// 3 s timeout).
			name:  "terminator",
			call:  keyCall{presses: []press{{time.Second, 300 * ms, "42#"}}, dtmf: turn.DTMFConfig{Terminator: '#', InterDigitTimeout: 3 * time.Second}},
			users: []string{"The caller pressed 4 2 #"}, waits: []time.Duration{0},
			turnCount: map[string]uint64{"dtmf": 3, "dtmf_turns": 1},
		},
		{
			// A key that is not a DTMF key is dropped at the transport.
			// Mutation: the transport's check removed (its counts become
			// dtmf 4, dtmf_invalid 0).
			name:      "invalid key",
			call:      keyCall{presses: []press{{time.Second, 300 * ms, "4x2#"}}, dtmf: turn.DTMFConfig{Terminator: '#'}},
			users:     []string{"The caller pressed 4 2 #"},
			turnCount: map[string]uint64{"dtmf": 3, "dtmf_invalid": 0},
			transport: map[string]uint64{"dtmf": 3, "dtmf_invalid": 1},
		},
		{
			// The fourth key comes while the model thinks about the first
			// three: it interrupts and starts the next turn. Mutation:
			// MaxDigits ignored (one turn of four keys after the timeout).
			name:  "max digits",
			call:  keyCall{presses: []press{{time.Second, 250 * ms, "1234"}}, dtmf: turn.DTMFConfig{MaxDigits: 3}},
			users: []string{"The caller pressed 1 2 3", "The caller pressed 4"}, waits: []time.Duration{0, 2 * time.Second}, interrupts: 1, unanswered: 1,
			turnCount: map[string]uint64{"dtmf_turns": 2, "dtmf_interrupts": 1},
		},
		{
			// A key while the bot speaks cuts it (at once: the barge-in
			// delay is for speech) and is the caller's turn. Mutation: no
			// interrupt on a key (the answer plays on, no clear).
			name: "key barges in",
			call: keyCall{talk: true, presses: []press{{3 * time.Second, 0, "5"}},
				dtmf: turn.DTMFConfig{MaxDigits: 1}},
			// (The spoken turn ends 450 ms after its VAD stop, with the
			// mock STT's final.)
			users: []string{"Hello there", "The caller pressed 5"}, waits: []time.Duration{450 * ms, 0}, interrupts: 1,
			turnCount: map[string]uint64{"dtmf_interrupts": 1, "interrupts": 1, "dtmf_turns": 1},
		},
		{
			// Barge mode: a key cuts the answer and reaches no model; a
			// key while idle does nothing. Mutation: barge mode collecting
			// (a turn "The caller pressed 5 7").
			name: "barge mode",
			call: keyCall{talk: true, presses: []press{{3 * time.Second, 0, "5"}, {8 * time.Second, 0, "7"}},
				dtmf: turn.DTMFConfig{Mode: turn.DTMFBarge}},
			users: []string{"Hello there"}, interrupts: 1,
			turnCount: map[string]uint64{"dtmf": 2, "dtmf_interrupts": 1, "dtmf_ignored": 1, "dtmf_turns": 0, "turns": 1},
		},
		{
			// Mutation: ignore mode treated as collect (a turn, and the
			// answer cut).
			name: "ignore mode",
			call: keyCall{talk: true, presses: []press{{3 * time.Second, 300 * ms, "12#"}},
				dtmf: turn.DTMFConfig{Mode: turn.DTMFIgnore, Terminator: '#'}},
			users:     []string{"Hello there"},
			turnCount: map[string]uint64{"dtmf": 3, "dtmf_ignored": 3, "interrupts": 0, "turns": 1},
		},
		{
			// Keys pressed while the caller speaks join the speech's turn,
			// which ends when the speech does. Mutation: closing the keys
			// without waiting for the speech (two turns: the keys with the
			// interim words at the '#', then the final words).
			name: "keys during speech",
			call: keyCall{
				scen:    sim.NewScenario("keys-in-speech").Silence(time.Second).Speak("My account number is", 2*time.Second).Silence(6 * time.Second),
				presses: []press{{1500 * ms, 300 * ms, "12#"}}, dtmf: turn.DTMFConfig{Terminator: '#'},
			},
			users:     []string{"My account number is. The caller pressed 1 2 #"},
			turnCount: map[string]uint64{"dtmf_held": 1, "dtmf_turns": 1, "turns": 1},
		},
		{
			// Keys held for the speech are bounded by MaxDigits too.
			// Mutation: the bound not checked for held keys (a turn of
			// three keys).
			name: "held keys bounded",
			call: keyCall{
				scen:    sim.NewScenario("keys-bounded").Silence(time.Second).Speak("My number is", 2500*ms).Silence(6 * time.Second),
				presses: []press{{1500 * ms, 300 * ms, "123"}}, dtmf: turn.DTMFConfig{MaxDigits: 2},
			},
			users:     []string{"My number is. The caller pressed 1 2"},
			turnCount: map[string]uint64{"dtmf": 3, "dtmf_overflow": 1, "dtmf_held": 1, "turns": 1},
		},
		{
			// Speech while keys are collected waits for the keys: a key
			// after the speech, within the inter-digit timeout, still joins
			// the turn. Mutation: the end of the speech ending the turn
			// while keys are open (two turns: "... 1 2", then "3").
			name: "speech during keys",
			call: keyCall{
				scen:    sim.NewScenario("speech-in-keys").Silence(1500*ms).Speak("is my code", 800*ms).Silence(7 * time.Second),
				presses: []press{{time.Second, 300 * ms, "12"}, {3200 * ms, 0, "3"}},
			},
			users: []string{"is my code. The caller pressed 1 2 3"}, waits: []time.Duration{2 * time.Second},
			turnCount: map[string]uint64{"speech_held": 1, "dtmf_turns": 1, "turns": 1},
		},
		{
			// The same with speculation on: no turn with keys is
			// speculated (its end waits for keys, not silence). Mutation:
			// the speculation guard without the keys (a speculation out at
			// the end of the speech, then discarded).
			name: "speech during keys, speculating",
			call: keyCall{
				scen:    sim.NewScenario("speech-in-keys").Silence(1500*ms).Speak("is my code", 800*ms).Silence(7 * time.Second),
				presses: []press{{time.Second, 300 * ms, "12"}, {3200 * ms, 0, "3"}},
				turn:    func(c *turn.Config) { c.EndOfTurnDelay, c.Speculate = 600*ms, true },
			},
			users: []string{"is my code. The caller pressed 1 2 3"}, waits: []time.Duration{2 * time.Second},
			turnCount: map[string]uint64{"speculations": 0, "speculations_discarded": 0, "dtmf_turns": 1, "turns": 1},
		},
		{
			// Keys during the end-of-turn delay take the speculation back
			// and wait for the delay to end: they join the turn. Mutation:
			// keys closed during the delay ending the turn at once (not
			// held: dtmf_held 0).
			name: "key takes a speculation back",
			call: keyCall{
				scen:    sim.NewScenario("key-after-words").Silence(time.Second).Speak("My code is", time.Second).Silence(7 * time.Second),
				presses: []press{{2700 * ms, 300 * ms, "1#"}},
				dtmf:    turn.DTMFConfig{Terminator: '#'},
				turn:    func(c *turn.Config) { c.EndOfTurnDelay, c.Speculate = 600*ms, true },
			},
			users:     []string{"My code is. The caller pressed 1 #"},
			turnCount: map[string]uint64{"speculations": 1, "speculations_discarded": 1, "speculations_committed": 0, "dtmf_held": 1, "turns": 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, _, err := tc.call.run(t)
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckInvariants(r, 0); err != nil {
					t.Fatal(err)
				}
				if got := userTexts(r.Context); !slices.Equal(got, tc.users) {
					t.Fatalf("the model got the turns %q, want %q", got, tc.users)
				}
				if tc.waits != nil {
					if got := turnWaits(r); !slices.Equal(got, tc.waits) {
						t.Fatalf("turns ended %v after the caller's input, want %v", got, tc.waits)
					}
				}
				if got := r.Interrupts(); got != tc.interrupts {
					t.Fatalf("%d interrupts reached the client, want %d", got, tc.interrupts)
				}
				// Every turn not cut was answered, in audio.
				if got, want := len(r.FirstAudios()), len(tc.users)-tc.unanswered; got != want {
					t.Fatalf("%d turns answered in audio, want %d", got, want)
				}
				for st, want := range map[messages.Stage]map[string]uint64{messages.StageTurn: tc.turnCount, messages.StageTransport: tc.transport} {
					got := counters(t, r, st)
					for k, v := range want {
						if got[k] != v {
							t.Errorf("%s counter %s = %d, want %d", st, k, got[k], v)
						}
					}
				}
			})
		})
	}
}

// TestDTMFEndCall: keys being collected when the call is ended are not a
// turn, and a key while the closing line plays does not cut it. Mutation
// caught (seen failing): a key interrupting while draining (the closing
// line cut, and the call then waits out the drain timeout instead of
// ending).
func TestDTMFEndCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		endCall := sim.Action{At: 1500 * ms, Do: func(h *sim.Handle) {
			h.System.Root.Send(h.Board, &switchboard.ToCall{Call: h.Call, Msg: &messages.EndCall{Line: longAnswer}})
		}}
		r, llm, err := keyCall{
			presses: []press{{time.Second, 300 * ms, "12"}, {2500 * ms, 0, "3"}},
			also:    []sim.Action{endCall},
		}.run(t)
		if !errors.Is(err, sim.ErrCallFailed) || r == nil || r.Ended.Reason != "ended by the agent" {
			t.Fatalf("the call did not end by the agent: %v", err)
		}
		if n := len(llm.Requests()); n != 0 {
			t.Fatalf("%d model requests: the keys of an ending call became a turn", n)
		}
		if got := r.Interrupts(); got != 0 {
			t.Fatalf("%d interrupts: a key cut the closing line", got)
		}
		if got := strings.Join(r.Spoken, ""); got != longAnswer {
			t.Fatalf("the bot said %q, want the closing line", got)
		}
	})
}

// TestDTMFDescribe: while keys are collected, Describe says so and how
// many keys the turn has (never which). Mutation caught (seen failing):
// the pending count not reported.
func TestDTMFDescribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var state string
		var pending uint64
		probe := sim.Action{At: 1700 * ms, Do: func(h *sim.Handle) {
			v, err := h.Request(&messages.Describe{})
			if err != nil {
				t.Errorf("describe: %v", err)
				return
			}
			for _, c := range v.(*messages.Description).Children {
				if c.Name == string(messages.StageTurn) {
					state, pending = c.State, c.Counters["digits_pending"]
				}
			}
		}}
		r, _, err := keyCall{presses: []press{{time.Second, 500 * ms, "42"}}, also: []sim.Action{probe}}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		if state != "collecting_digits" || pending != 2 {
			t.Fatalf("mid-collection: state %q, %d keys pending; want collecting_digits, 2", state, pending)
		}
		if got := counters(t, r, messages.StageTurn)["digits_pending"]; got != 0 {
			t.Fatalf("%d keys pending after the turn", got)
		}
	})
}

// TestDTMFConfig: the DTMF settings are checked with the turn config, and
// the zero value collects with the defaults.
func TestDTMFConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  turn.DTMFConfig
		ok   bool
	}{
		{"zero", turn.DTMFConfig{}, true},
		{"all set", turn.DTMFConfig{Mode: turn.DTMFCollect, InterDigitTimeout: 5 * time.Second, Terminator: '#', MaxDigits: 16}, true},
		{"barge", turn.DTMFConfig{Mode: turn.DTMFBarge}, true},
		{"ignore", turn.DTMFConfig{Mode: turn.DTMFIgnore}, true},
		{"star terminator", turn.DTMFConfig{Terminator: '*'}, true},
		{"one key a turn", turn.DTMFConfig{MaxDigits: 1}, true},
		{"longest", turn.DTMFConfig{InterDigitTimeout: turn.MaxInterDigitTimeout, MaxDigits: turn.MaxMaxDigits}, true},
		{"unknown mode", turn.DTMFConfig{Mode: "skip"}, false},
		{"negative timeout", turn.DTMFConfig{InterDigitTimeout: -time.Second}, false},
		{"timeout in the wrong unit", turn.DTMFConfig{InterDigitTimeout: 2000 * time.Second}, false},
		{"terminator not a key", turn.DTMFConfig{Terminator: 'x'}, false},
		{"terminator a digit's value", turn.DTMFConfig{Terminator: 9}, false},
		{"negative max", turn.DTMFConfig{MaxDigits: -1}, false},
		{"max too large", turn.DTMFConfig{MaxDigits: turn.MaxMaxDigits + 1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := (turn.Config{DTMF: tc.cfg}).Validate()
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, turn.ErrInvalidConfig)) {
				t.Fatalf("Validate: %v, want ok %v", err, tc.ok)
			}
		})
	}
	d := (turn.Config{}).WithDefaults().DTMF
	if d != (turn.DTMFConfig{Mode: turn.DTMFCollect, InterDigitTimeout: turn.DefaultInterDigitTimeout, MaxDigits: turn.DefaultMaxDigits}) {
		t.Fatalf("defaults %+v", d)
	}
}

// TestDTMFKeyStopsSpeculation: a key stops the speculative answer at once
// (a paid request), not when the turn ends. The key comes 50 ms after the
// speculation went out, before the model's first token (300 ms), so the
// model sends nothing of it; the turn's own answer is two events.
// Mutation caught (seen failing): the key not taking the speculation back
// (it streams until the turn ends, 600 ms after it went out: 13 events).
func TestDTMFKeyStopsSpeculation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("and then some more words ", 10)
		r, llm, err := keyCall{
			scen:      sim.NewScenario("key-stops-speculation").Silence(time.Second).Speak("My code is", time.Second).Silence(7 * time.Second),
			presses:   []press{{2500 * ms, 300 * ms, "1#"}},
			dtmf:      turn.DTMFConfig{Terminator: '#'},
			turn:      func(c *turn.Config) { c.EndOfTurnDelay, c.Speculate = 600*ms, true },
			responses: []providertest.Response{{Text: long}, {Text: "Noted."}},
		}.run(t)
		if err != nil {
			t.Fatal(err)
		}
		if got := userTexts(r.Context); !slices.Equal(got, []string{"My code is. The caller pressed 1 #"}) {
			t.Fatalf("turns %q", got)
		}
		if c := counters(t, r, messages.StageTurn); c["speculations"] != 1 || c["speculations_discarded"] != 1 {
			t.Fatalf("speculations %d, discarded %d: want the key after one", c["speculations"], c["speculations_discarded"])
		}
		if n := llm.EventsSent(); n != 2 {
			t.Fatalf("the model sent %d events, want only the 2 of the turn's answer", n)
		}
	})
}

// TestDTMFRandomCalls: calls with keys and speech at seeded random times
// under random settings. Whatever the interleaving, every key pressed is
// in exactly one turn the model got or counted as over the bound, no turn
// has more than MaxDigits keys, and the call keeps the simulator's
// invariants. Mutation caught (seen failing): the keys not reset after a
// turn (keys counted twice).
func TestDTMFRandomCalls(t *testing.T) {
	for seed := range uint64(24) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 13))
			cfg := turn.DTMFConfig{
				MaxDigits:         1 + rng.IntN(6),
				InterDigitTimeout: time.Duration(1+rng.IntN(4)) * 500 * ms,
			}
			if rng.IntN(2) == 0 {
				cfg.Terminator = '#'
			}
			scen := sim.NewScenario(fmt.Sprintf("keys-random-%d", seed)).Silence(time.Duration(500+rng.IntN(2000)) * ms)
			for range rng.IntN(3) {
				scen.Speak("one two three", time.Duration(500+rng.IntN(1500))*ms).Silence(time.Duration(300+rng.IntN(2000)) * ms)
			}
			scen.Silence(3 * time.Second)
			var presses []press
			last := scen.Duration() - 3*time.Second
			for at := time.Duration(rng.IntN(1000)) * ms; at < last; at += time.Duration(100+rng.IntN(2400)) * ms {
				presses = append(presses, press{at, 0, string("0123456789*#"[rng.IntN(12)])})
			}
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var turns []string
				r, _, err := keyCall{scen: scen, presses: presses, dtmf: cfg,
					responses: []providertest.Response{{Text: "Okay."}, {Text: "Right."}, {Text: "Sure."}, {Text: "Fine."}, {Text: "Good."}, {Text: "Yes."},
						{Text: "Okay."}, {Text: "Right."}, {Text: "Sure."}, {Text: "Fine."}, {Text: "Good."}, {Text: "Yes."}},
					onEvent: func(e messages.CallEvent) {
						if e.Kind == messages.EventUserTurn {
							mu.Lock()
							turns = append(turns, e.Text)
							mu.Unlock()
						}
					}}.run(t)
				if err != nil {
					t.Fatal(err)
				}
				if err := sim.CheckInvariants(r, 0); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				inTurns := 0
				for _, text := range turns {
					_, pressed, ok := strings.Cut(text, "The caller pressed ")
					if !ok {
						continue
					}
					n := len(strings.Fields(pressed))
					if n > cfg.MaxDigits {
						t.Fatalf("a turn of %d keys, over MaxDigits %d: %q", n, cfg.MaxDigits, text)
					}
					inTurns += n
				}
				c := counters(t, r, messages.StageTurn)
				if c["dtmf"] != uint64(len(presses)) || uint64(inTurns)+c["dtmf_overflow"] != c["dtmf"] || c["digits_pending"] != 0 {
					t.Fatalf("%d keys pressed, the turn actor got %d: %d in turns, %d over the bound, %d pending (turns %q)",
						len(presses), c["dtmf"], inTurns, c["dtmf_overflow"], c["digits_pending"], turns)
				}
			})
		})
	}
}
