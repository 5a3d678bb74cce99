package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/providertest"
)

const msec = time.Millisecond

// The mocks' default latencies and the energy VAD's hangover: with them a
// caller hears the answer 950 msec after they stop speaking.
const (
	DefaultHangover  = 300 * msec
	DefaultSTTFinal  = 150 * msec
	DefaultFirstTok  = 300 * msec
	DefaultFirstByte = 200 * msec
	DefaultResponse  = DefaultHangover + DefaultSTTFinal + DefaultFirstTok + DefaultFirstByte
)

// BargeInBound is how soon after the caller starts talking over the bot
// the clear must reach the client: the VAD needs 40 ms of speech, and one
// frame of slack is allowed.
const BargeInBound = 60 * msec

// AnswerBound is how soon after the end of the caller's speech an answer
// must start in the scenarios with default latencies.
const AnswerBound = 1500 * msec

// Case is one scenario of a suite: Build makes a fresh call (fresh mocks:
// they hold state), Check judges a run beyond the invariants every run is
// held to.
type Case struct {
	Name  string
	Build func() *Call
	Check func(r *Result, c *Call) error
	// Slack is the word slack of the played-text check for turns cut by a
	// barge-in (the pacer's lead margin may leave out one heard word).
	Slack int
}

// Outcome is a case's verdict over its two runs.
type Outcome struct {
	Name        string
	Passed      bool
	Err         error
	Fingerprint string
	// FirstAudio is, per user turn, the time from the end of the caller's
	// speech to the first bot audio after it.
	FirstAudio []time.Duration
	// ToSilence is, per interrupt, the time from the interrupt to the
	// clear at the client.
	ToSilence []time.Duration
	Result    *Result
}

// RunCase runs a case twice and checks both runs and that they are equal.
// Call it inside a testing/synctest bubble.
func RunCase(c Case) Outcome {
	out := Outcome{Name: c.Name}
	var prints [2]string
	for i := range prints {
		call := c.Build()
		r, err := call.Run()
		if err == nil {
			err = CheckInvariants(r, c.Slack)
		}
		if err == nil && c.Check != nil {
			err = c.Check(r, call)
		}
		if err != nil {
			out.Err = fmt.Errorf("run %d: %w", i+1, err)
			out.Result = r
			return out
		}
		prints[i] = r.Fingerprint()
		if i == 0 {
			out.Result = r
			out.FirstAudio = r.FirstAudios()
			out.ToSilence = toSilence(r)
		}
	}
	out.Fingerprint = prints[0]
	if prints[0] != prints[1] {
		out.Err = fmt.Errorf("%w: two runs differ: %s != %s", ErrCheck, prints[0], prints[1])
		return out
	}
	out.Passed = true
	return out
}

// CheckInvariants holds for every run: the call ended by the hang-up, no
// stale audio, the context is what was heard, the roles are in order, no
// output record was dropped.
func CheckInvariants(r *Result, slack int) error {
	if r.Ended.Err != nil {
		return fmt.Errorf("%w: call ended with %v", ErrCheck, r.Ended.Err)
	}
	if r.Dropped > 0 {
		return fmt.Errorf("%w: %d output records dropped", ErrCheck, r.Dropped)
	}
	return errors.Join(r.LayoutErr, r.CheckNoStaleAudio(), r.CheckContextMatchesPlayed(slack), r.CheckRoles(), r.CheckNoCallerAudioLost())
}

// FirstAudios is, per answered user turn (timelines come oldest first),
// the time from the end of speech (the backdated VAD stop) to the first
// audio out.
func (r *Result) FirstAudios() []time.Duration {
	var out []time.Duration
	for _, t := range r.Timelines {
		end, ok := t.Marks[messages.MarkVADStop]
		first, ok2 := t.Marks[messages.MarkFirstAudioOut]
		if ok && ok2 {
			out = append(out, first.Sub(end))
		}
	}
	return out
}

func toSilence(r *Result) []time.Duration {
	var out []time.Duration
	for _, t := range r.Timelines {
		if at, ok := t.Marks[messages.MarkInterrupt]; ok {
			for _, rec := range r.Records {
				if rec.Kind == RecordClear && rec.Epoch == t.Epoch {
					out = append(out, rec.At.Sub(at))
					break
				}
			}
		}
	}
	return out
}

// base is a call with the default mocks.
func base(s *Scenario, responses ...providertest.Response) *Call {
	return &Call{
		Scenario: s,
		Linger:   3 * time.Second,
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
		LLM:      providertest.NewMockLLM(providertest.LLMConfig{}, responses...),
		TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
	}
}

// expect checks turn and interrupt counts.
func expect(r *Result, turns, interrupts int) error {
	if got := r.Turns(); got != turns {
		return fmt.Errorf("%w: %d turns, want %d", ErrCheck, got, turns)
	}
	if got := r.Interrupts(); got != interrupts {
		return fmt.Errorf("%w: %d interrupts at the output, want %d", ErrCheck, got, interrupts)
	}
	return nil
}

// answeredWithin checks every utterance's answer against bound.
func answeredWithin(r *Result, s *Scenario, bound time.Duration, which ...int) error {
	ends := r.SpeechEnds(s)
	for _, i := range which {
		if err := r.CheckBotAudioWithin(ends[i], bound); err != nil {
			return fmt.Errorf("utterance %d: %w", i, err)
		}
	}
	return nil
}

// saidTurn returns the assistant words of user turn i.
func saidTurn(r *Result, i int) []string {
	said := SaidPerTurn(r.Context)
	if i < len(said) {
		return said[i]
	}
	return nil
}

func equalWords(got []string, want string) error {
	w := strings.Fields(want)
	if fmt.Sprint(got) != fmt.Sprint(w) {
		return fmt.Errorf("%w: said %q, want %q", ErrCheck, got, w)
	}
	return nil
}

const longAnswer = "We are open from nine in the morning until six in the evening on weekdays, and from ten until four on Saturdays; on Sundays we are closed."

// Scenarios is the scenario suite (s01 to s12).
func Scenarios() []Case {
	return []Case{
		{Name: "s01_happy_path", Build: s01Build, Check: s01Check},
		{Name: "s02_barge_in", Slack: 1, Build: func() *Call {
			s := NewScenario("s02").Silence(500*msec).Speak("Tell me about your opening hours.", 1000*msec).
				Silence(1500*msec).Speak("Wait, one more thing.", 800*msec).Silence(3000 * msec)
			return base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Sure, go ahead."})
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 2, 1), answeredWithin(r, c.Scenario, AnswerBound, 0, 1),
				interruptedWithin(r, c.Scenario, 1, BargeInBound), nonEmptyCut(r, 0), equalWords(saidTurn(r, 1), "Sure, go ahead."))
		}},
		{Name: "s03_double_utterance", Build: func() *Call {
			s := NewScenario("s03").Silence(500*msec).Speak("Hi.", 800*msec).Silence(450*msec).
				Speak("Is anyone there?", 800*msec).Silence(3000 * msec)
			return base(s, providertest.Response{Text: "Hello!"}, providertest.Response{Text: "Yes, I am here. How can I help?"})
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 2, 1), answeredWithin(r, c.Scenario, AnswerBound, 1),
				equalWords(saidTurn(r, 0), ""), equalWords(saidTurn(r, 1), "Yes, I am here. How can I help?"))
		}},
		{Name: "s04_long_silence", Build: func() *Call {
			s := NewScenario("s04").Silence(500*msec).Speak("Hello there.", 900*msec).Silence(12*time.Second).
				Speak("Are you still there?", 1000*msec).Silence(3000 * msec)
			return base(s, providertest.Response{Text: "Hello! How can I help you today?"}, providertest.Response{Text: "Yes, I am still here."})
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 2, 0), answeredWithin(r, c.Scenario, AnswerBound, 0, 1))
		}},
		{Name: "s05_provider_stall", Build: func() *Call {
			s := NewScenario("s05").Silence(500*msec).Speak("What is my balance?", 1000*msec).Silence(10*time.Second).
				Speak("Hello?", 600*msec).Silence(3000 * msec)
			c := base(s, providertest.Response{Text: "Your balance is ten euros."}, providertest.Response{Text: "Sorry for the wait, I am here now."})
			c.LLM.Inject(providertest.Fault{Kind: providertest.FaultStall, BeforeEvent: 0})
			c.Configure = func(cfg *session.Config) { cfg.LLMConfig.RoundTimeout = 3 * time.Second }
			return c
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 2, 0), answeredWithin(r, c.Scenario, 3*time.Second+AnswerBound, 0),
				answeredWithin(r, c.Scenario, AnswerBound, 1), saidFallback(r, 0))
		}},
		{Name: "s06_llm_error", Build: func() *Call {
			s := NewScenario("s06").Silence(500*msec).Speak("Book me a table.", 1000*msec).Silence(4*time.Second).
				Speak("Can you hear me?", 800*msec).Silence(3000 * msec)
			return base(s, providertest.Response{Err: &providers.Rejected{Status: 503}}, providertest.Response{Text: "Yes, I can hear you."})
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 2, 0), answeredWithin(r, c.Scenario, AnswerBound, 0, 1), saidFallback(r, 0))
		}},
		{Name: "s07_stt_disconnect", Build: func() *Call {
			s := NewScenario("s07").Silence(500*msec).Speak("I need to change my delivery address please.", 1500*msec).Silence(4000 * msec)
			c := base(s, providertest.Response{Text: "Of course, what is the new address?"})
			c.STT.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 2})
			return c
		}, Check: func(r *Result, c *Call) error {
			if r.STTConnects != 2 {
				return fmt.Errorf("%w: %d stt connects, want 2 (one reconnect)", ErrCheck, r.STTConnects)
			}
			return errors.Join(expect(r, 1, 0), answeredWithin(r, c.Scenario, AnswerBound, 0),
				userSaid(r, 0, "I need to change my delivery address please."))
		}},
		{Name: "s08_tool_call_with_text", Build: func() *Call {
			s := NewScenario("s08").Silence(500*msec).Speak("What time is it?", 1000*msec).Silence(5000 * msec)
			c := base(s,
				providertest.Response{Text: "Let me check the time.", Calls: []providertest.ScriptedCall{{ID: "call_1", Name: "get_time", Args: `{}`}}},
				providertest.Response{Text: "It is twelve o'clock."})
			c.Tools = mustRegistry(timeTool())
			return c
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 1, 0), answeredWithin(r, c.Scenario, AnswerBound, 0),
				equalWords(saidTurn(r, 0), "Let me check the time. It is twelve o'clock."), toolAnswered(r, "t1.0", "12:00")) // the engine's id; the provider's call_1 stays as ProviderID
		}},
		{Name: "s09_back_to_back_turns", Build: func() *Call {
			s := NewScenario("s09").Silence(500*msec).Speak("First question.", 800*msec).Silence(3500*msec).
				Speak("Second question.", 800*msec).Silence(3500*msec).Speak("Third question.", 800*msec).Silence(3000 * msec)
			return base(s, providertest.Response{Text: "First answer."}, providertest.Response{Text: "Second answer."}, providertest.Response{Text: "Third answer."})
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 3, 0), answeredWithin(r, c.Scenario, AnswerBound, 0, 1, 2))
		}},
		{Name: "s10_interrupt_during_tts_first_byte", Build: func() *Call {
			s := NewScenario("s10").Silence(500*msec).Speak("Can you help me?", 1000*msec).Silence(1200*msec).
				Speak("Actually, never mind.", 800*msec).Silence(4000 * msec)
			c := base(s, providertest.Response{Text: "Sure, I can help you with that."}, providertest.Response{Text: "Alright, no problem."})
			c.TTS = providertest.NewMockTTS(providertest.TTSConfig{FirstByte: 1500 * msec})
			return c
		}, Check: func(r *Result, c *Call) error {
			return errors.Join(expect(r, 2, 1), answeredWithin(r, c.Scenario, AnswerBound+1300*msec, 1),
				equalWords(saidTurn(r, 0), ""), equalWords(saidTurn(r, 1), "Alright, no problem."))
		}},
		{Name: "s11_tts_disconnect_mid_answer", Build: func() *Call {
			s := NewScenario("s11").Silence(500*msec).Speak("Tell me about your opening hours.", 1000*msec).Silence(6*time.Second).
				Speak("Hello?", 600*msec).Silence(3000 * msec)
			c := base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Sorry, I was cut off."})
			c.TTS.Inject(providertest.Fault{Kind: providertest.FaultDisconnect, BeforeEvent: 12})
			return c
		}, Check: func(r *Result, c *Call) error {
			if r.TTSConnects != 2 {
				return fmt.Errorf("%w: %d tts connects, want 2", ErrCheck, r.TTSConnects)
			}
			return errors.Join(expect(r, 2, 0), answeredWithin(r, c.Scenario, AnswerBound, 0, 1), nonEmptyCut(r, 0),
				equalWords(saidTurn(r, 1), "Sorry, I was cut off."))
		}},
		{Name: "s12_speculation", Build: s12Build, Check: s12Check},
	}
}

// speculationDelay is s12's end-of-turn delay.
const speculationDelay = 600 * msec

// s12Build is s01 with an end-of-turn delay and speculation on: the turn
// goes to the model when the transcript is final, and is committed when
// the delay passed in silence.
func s12Build() *Call {
	c := s01Build()
	c.Scenario = NewScenario("s12").Silence(500*msec).Speak("Hello, I would like to book a table.", 1500*msec).Silence(4000 * msec)
	c.STT = providertest.NewMockSTT(c.STT.Config(), c.Scenario.Utterances())
	c.Configure = func(cfg *session.Config) {
		cfg.Turn.EndOfTurnDelay = speculationDelay
		cfg.Turn.Speculate = true
	}
	return c
}

// s12Check pins the saving: the model's first token (shorter than the
// delay) is hidden in the end-of-turn delay, so first audio is the end of
// speech plus the hangover, the STT final, the delay and the TTS first
// byte, exactly.
func s12Check(r *Result, c *Call) error {
	if c.LLM.Config().FirstToken >= speculationDelay {
		return fmt.Errorf("%w: the first token (%v) must fit in the delay (%v)", ErrCheck, c.LLM.Config().FirstToken, speculationDelay)
	}
	want := DefaultHangover + c.STT.Config().FinalLatency + speculationDelay + c.TTS.Config().FirstByte
	end := r.SpeechEnds(c.Scenario)[0]
	at, ok := r.FirstAudioAfter(end)
	if !ok {
		return fmt.Errorf("%w: no answer", ErrCheck)
	}
	if got := at.Sub(end); got != want {
		return fmt.Errorf("%w: first audio %v after the end of speech, want exactly %v (the %v first token hidden)", ErrCheck, got, want, c.LLM.Config().FirstToken)
	}
	return errors.Join(expect(r, 1, 0), equalWords(saidTurn(r, 0), "Of course. For how many people, and at what time?"))
}

func s01Build() *Call {
	rng := rand.New(rand.NewPCG(2026, 11))
	final := time.Duration(80+rng.IntN(120)) * msec
	ft := time.Duration(200+rng.IntN(300)) * msec
	fb := time.Duration(100+rng.IntN(200)) * msec
	s := NewScenario("s01").Silence(500*msec).Speak("Hello, I would like to book a table.", 1500*msec).Silence(4000 * msec)
	return &Call{
		Scenario: s, Linger: 2 * time.Second,
		STT: providertest.NewMockSTT(providertest.STTConfig{FinalLatency: final}, s.Utterances()),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{FirstToken: ft}, providertest.Response{Text: "Of course. For how many people, and at what time?"}),
		TTS: providertest.NewMockTTS(providertest.TTSConfig{FirstByte: fb}),
	}
}

// s01Check pins the engine's own delay at zero: first audio is exactly the
// end of speech plus the VAD hangover, the STT final, the LLM's first token
// and the TTS first byte.
func s01Check(r *Result, c *Call) error {
	want := DefaultHangover + c.STT.Config().FinalLatency + c.LLM.Config().FirstToken + c.TTS.Config().FirstByte
	end := r.SpeechEnds(c.Scenario)[0]
	at, ok := r.FirstAudioAfter(end)
	if !ok {
		return fmt.Errorf("%w: no answer", ErrCheck)
	}
	if got := at.Sub(end); got != want {
		return fmt.Errorf("%w: first audio %v after the end of speech, want exactly %v", ErrCheck, got, want)
	}
	return errors.Join(expect(r, 1, 0), equalWords(saidTurn(r, 0), "Of course. For how many people, and at what time?"))
}

// interruptedWithin checks that the clear of the barge-in by utterance i
// reached the client within bound of the utterance's start.
func interruptedWithin(r *Result, s *Scenario, i int, bound time.Duration) error {
	start := r.Start.Add(s.SpeechSegments()[i].Start)
	for _, rec := range r.Records {
		if rec.Kind == RecordClear && !rec.At.Before(start) {
			if d := rec.At.Sub(start); d > bound {
				return fmt.Errorf("%w: interrupt at the output %v after the barge-in started, over %v", ErrCheck, d, bound)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: no interrupt at the output after utterance %d started", ErrCheck, i)
}

func nonEmptyCut(r *Result, turn int) error {
	if n := len(saidTurn(r, turn)); n == 0 || n >= len(strings.Fields(longAnswer)) {
		return fmt.Errorf("%w: turn %d kept %d words; a cut mid-answer should keep some but not all", ErrCheck, turn, n)
	}
	return nil
}

func saidFallback(r *Result, turn int) error {
	return equalWords(saidTurn(r, turn), defaultFallback())
}

func defaultFallback() string {
	var cfg session.Config
	return cfg.WithDefaults().LLMConfig.FallbackLine
}

func userSaid(r *Result, turn int, want string) error {
	n := 0
	for i := 0; i < r.Context.Len(); i++ {
		if m := r.Context.At(i); m.Role == agent.RoleUser {
			if n == turn {
				if m.Text != want {
					return fmt.Errorf("%w: user turn %d is %q, want %q", ErrCheck, turn, m.Text, want)
				}
				return nil
			}
			n++
		}
	}
	return fmt.Errorf("%w: no user turn %d", ErrCheck, turn)
}

func toolAnswered(r *Result, id, content string) error {
	for i := 0; i < r.Context.Len(); i++ {
		if m := r.Context.At(i); m.Role == agent.RoleTool && m.ToolCallID == id {
			if m.Text != content || m.IsError {
				return fmt.Errorf("%w: tool result %q (error %v), want %q", ErrCheck, m.Text, m.IsError, content)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: call %s has no result in the context", ErrCheck, id)
}

// timeTool is the ReadOnly tool of s08.
func timeTool() agent.Tool {
	return agent.NewFuncTool(agent.Spec{
		Name: "get_time", Description: "The current time.", Effect: agent.ReadOnly,
		Timeout:    agent.DefaultTimeout,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
	}, func(context.Context, json.RawMessage, agent.CallInfo) (agent.Output, error) {
		return agent.Output{Content: "12:00"}, nil
	})
}

func mustRegistry(tools ...agent.Tool) *agent.Registry {
	r, err := agent.NewRegistry(tools...)
	if err != nil {
		panic(err) // the suite's own tools are valid
	}
	return r
}
