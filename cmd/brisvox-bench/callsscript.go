package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/providers/providertest"
)

// A caller's conversation is drawn from the run's seed and the caller's
// index, by the callers' process (what to say, when) and the server's
// agent alike (what the mocks answer, how long they take), so both sides
// know the same script without telling each other; the bench subtracts
// the scripted latencies from what it measured.

// callTurn is one turn of a scripted conversation.
type callTurn struct {
	// Utt is the fixture utterance the caller says.
	Utt int
	// BargeIn: the caller starts BargeAfter after the first audio of the
	// previous answer, while the bot speaks; otherwise Pause after the
	// previous answer ended.
	BargeIn    bool
	BargeAfter time.Duration
	Pause      time.Duration
	// Tool: the model answers with a tool call first (ToolDur long),
	// then speaks after a second first token (LLMFirst2).
	Tool      bool
	SideEff   bool
	LLMFirst  time.Duration
	ToolDur   time.Duration
	LLMFirst2 time.Duration
	// Answer is the text the bot speaks.
	Answer string
}

// callScript is one caller's conversation and the mocks' latencies of
// its call (per call: STT final, TTS first byte, the LLM's token gap;
// per turn: the LLM's first tokens and the tool's duration).
type callScript struct {
	STTFinal time.Duration
	TTSFirst time.Duration
	TokenGap time.Duration
	// Start is the silence before the first turn.
	Start time.Duration
	Turns []callTurn
}

// callAnswers are the bot's answers: 9 to 13 words, 1.9 to 3 s of
// audio at the mock TTS's word length, so a barge-in 0.3-0.7 s into one
// always finds the bot speaking.
var callAnswers = []string{
	"Of course, I can call you back tomorrow morning at nine if that suits you.",
	"Thank you, I found booking four two seven and it is confirmed for Friday evening.",
	"The train to the airport leaves at half past nine from platform two today.",
	"Let me check that for you, the order was shipped yesterday and arrives soon.",
	"Yes, we are open until eight tonight and the kitchen closes at half past seven.",
}

// callsTurnsFor is how many turns a script of a call lasting d holds:
// more than it can speak (a turn takes at least about 4 s: the shortest
// utterance, a first audio, a barge-in after 0.3 s).
func callsTurnsFor(d time.Duration) int { return int(d/(3*time.Second)) + 4 }

// newCallScript draws caller i's conversation of turns turns from seed.
func newCallScript(seed uint64, caller, utterances, turns int) callScript {
	r := rand.New(rand.NewPCG(seed, uint64(caller)))
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond }
	s := callScript{
		STTFinal: ms(80, 250),
		TTSFirst: ms(80, 250),
		TokenGap: ms(15, 45),
		Start:    ms(300, 1500),
		Turns:    make([]callTurn, turns),
	}
	for k := range s.Turns {
		t := callTurn{
			Utt:      r.IntN(utterances),
			Pause:    ms(300, 900),
			LLMFirst: ms(150, 450),
			Answer:   callAnswers[r.IntN(len(callAnswers))],
		}
		if k > 0 && r.IntN(5) == 0 {
			t.BargeIn, t.BargeAfter = true, ms(300, 700)
		}
		if r.IntN(5) == 0 {
			t.Tool, t.SideEff = true, r.IntN(2) == 0
			t.ToolDur, t.LLMFirst2 = ms(100, 400), ms(150, 450)
		}
		s.Turns[k] = t
	}
	return s
}

// callToolEvents is how many stream events a tool-call-only response of
// the mock LLM has before the tools run: the call's two argument
// fragments (providertest splits arguments of two bytes or more in two)
// and Done, each TokenGap after the one before, the first at LLMFirst.
const callToolEvents = 3

// toolArgs are the arguments of turn k's tool call.
func toolArgs(k int) string { return `{"turn":` + strconv.Itoa(k) + `}` }

// responses is the mock LLM's script for the call: per turn a text
// answer, or a tool call and then the answer.
func (s callScript) responses() []providertest.Response {
	out := make([]providertest.Response, 0, len(s.Turns)+len(s.Turns)/4)
	for k, t := range s.Turns {
		if !t.Tool {
			out = append(out, providertest.Response{Text: t.Answer, FirstToken: t.LLMFirst})
			continue
		}
		name := "lookup_order"
		if t.SideEff {
			name = "book_slot"
		}
		out = append(out,
			providertest.Response{Calls: []providertest.ScriptedCall{{ID: "c" + strconv.Itoa(k), Name: name, Args: toolArgs(k)}}, FirstToken: t.LLMFirst},
			providertest.Response{Text: t.Answer, FirstToken: t.LLMFirst2})
	}
	return out
}

// scripted is the providers' time on turn k's path from the VAD's stop
// decision to the first audio: STT final, the first token, for a tool
// turn the rest of the call's stream, the tool and the second first
// token, and the TTS's first byte.
func (s callScript) scripted(k int) time.Duration {
	t := s.Turns[k]
	d := s.STTFinal + t.LLMFirst + s.TTSFirst
	if t.Tool {
		d += (callToolEvents-1)*s.TokenGap + t.ToolDur + t.LLMFirst2
	}
	return d
}

// callFixture is the speech the callers say: the utterances of a fixture
// with exact sample boundaries, at 16 kHz.
type callFixture struct {
	Texts []string
	PCM   [][]int16
}

// fixtureBase finds .native/fixtures/en from the working directory up to
// the module root.
func fixtureBase() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".native", "fixtures", "en"), nil
		}
		if dir == filepath.Dir(dir) {
			return "", errors.New("no module root above the working directory (give --fixture)")
		}
	}
}

// loadCallFixture reads base.wav and base.json.
func loadCallFixture(base string) (callFixture, error) {
	f, err := os.Open(base + ".wav")
	if err != nil {
		return callFixture{}, fmt.Errorf("speech fixture (go tool task setup makes it): %w", err)
	}
	defer f.Close()
	w, err := media.ReadWAV(f, media.DefaultWAVLimit)
	if err != nil {
		return callFixture{}, err
	}
	raw, err := os.ReadFile(base + ".json")
	if err != nil {
		return callFixture{}, err
	}
	var truth struct {
		Rate     int `json:"rate"`
		Segments []struct {
			Start int    `json:"start_sample"`
			End   int    `json:"end_sample"`
			Text  string `json:"text"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		return callFixture{}, err
	}
	if w.Rate != 16000 || truth.Rate != 16000 || len(truth.Segments) == 0 {
		return callFixture{}, fmt.Errorf("%s: %d Hz, %d segments (want 16000 Hz speech)", base, w.Rate, len(truth.Segments))
	}
	var fx callFixture
	for _, s := range truth.Segments {
		if s.Start < 0 || s.End > len(w.Samples) || s.End <= s.Start {
			return callFixture{}, fmt.Errorf("%s: segment %d-%d outside the audio", base, s.Start, s.End)
		}
		fx.Texts = append(fx.Texts, s.Text)
		fx.PCM = append(fx.PCM, w.Samples[s.Start:s.End])
	}
	return fx, nil
}

// utterances are the texts caller's script says, in order: the mock
// STT's script.
func (s callScript) utterances(fx callFixture) []string {
	out := make([]string, len(s.Turns))
	for k, t := range s.Turns {
		out[k] = fx.Texts[t.Utt]
	}
	return out
}
