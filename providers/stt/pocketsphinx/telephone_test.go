package pocketsphinx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/brisvox/brisvox/providers/llm/rules"
	"github.com/brisvox/brisvox/providers/tts/flite"
)

// This file is the measurement of issue 13 item 6: pocketsphinx's wideband
// model on a telephone line's audio (8 kHz G.711, upsampled to 16 kHz by
// the call's one resampler) against the same speech at 16 kHz.

// channel is the path audio takes from the speaker to the recognizer.
type channel int

const (
	// wideband is 16 kHz PCM as made (path A).
	wideband channel = iota
	// mulaw is 16 kHz -> 8 kHz -> G.711 mu-law -> 8 kHz -> 16 kHz (path B).
	mulaw
	// alaw is the same with G.711 A-law (path C).
	alaw
	// narrowband is 16 kHz -> 8 kHz -> 16 kHz with no codec: what the
	// band limit alone costs (a diagnostic, path D).
	narrowband
)

func (c channel) String() string {
	return [...]string{"A 16k", "B mu-law 8k", "C A-law 8k", "D 8k no codec"}[c]
}

// lineFrame is 20 ms at 16 kHz: the line carries 20 ms packets.
const lineFrame = 320

// apply sends 16 kHz pcm through the channel in 20 ms frames, as a call
// would, and returns 16 kHz audio of the same length, aligned with pcm:
// the two resamplers' group delay is flushed with silence and cut off
// the front, so the segments' sample positions still hold.
func (c channel) apply(t testing.TB, pcm []int16) []int16 {
	t.Helper()
	if c == wideband {
		return append([]int16(nil), pcm...)
	}
	down, err := media.NewResampler(16000, 8000, media.ResamplerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	up, err := media.NewResampler(8000, 16000, media.ResamplerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	delay := int(math.Round(2*down.Delay() + up.Delay()))
	in := append(append([]int16(nil), pcm...), make([]int16, delay+lineFrame)...)
	narrow := make([]int16, down.MaxOutLen(lineFrame))
	line := make([]byte, len(narrow))
	out := make([]int16, 0, len(in)+lineFrame)
	wide := make([]int16, up.MaxOutLen(len(narrow)))
	for i := 0; i < len(in); i += lineFrame {
		n, _ := down.Process(narrow, in[i:min(i+lineFrame, len(in))])
		switch c {
		case mulaw:
			media.MulawEncode(line, narrow[:n])
			media.MulawDecode(narrow, line[:n])
		case alaw:
			media.AlawEncode(line, narrow[:n])
			media.AlawDecode(narrow, line[:n])
		}
		m, _ := up.Process(wide, narrow[:n])
		out = append(out, wide[:m]...)
	}
	if len(out) < delay+len(pcm) {
		t.Fatalf("%v: %d samples out of %d in, delay %d", c, len(out), len(pcm), delay)
	}
	return out[delay : delay+len(pcm)]
}

// utterance is one caller's turn of a recording: its audio ends (with the
// VAD-like hangover) at end, where Finalize is called.
type utterance struct {
	end     int
	text    string // what was said, the ground truth
	english bool
	// history is the conversation before the turn, for the intent check.
	history []agent.Message
}

// recording is a call's audio at 16 kHz and its turns.
type recording struct {
	name  string
	pcm   []int16
	turns []utterance
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// engineOrSkip skips, with the reason, where pocketsphinx cannot run: no
// cgo or no model.
func engineOrSkip(t testing.TB) {
	t.Helper()
	if !cgoEnabled {
		t.Skip("built without cgo: pocketsphinx needs libpocketsphinx through cgo")
	}
	if err := (Config{}).Validate(); err != nil {
		t.Skipf("pocketsphinx model missing (`go tool task setup` installs it): %v", err)
	}
}

// fixtureRecording reads a speech fixture as a recording, skipping the
// test with the reason when it is missing.
func fixtureRecording(t testing.TB, name string) recording {
	t.Helper()
	base := filepath.Join(moduleRoot(t), ".native", "fixtures", name)
	for _, ext := range []string{".wav", ".json"} {
		if _, err := os.Stat(base + ext); errors.Is(err, os.ErrNotExist) {
			t.Skipf("speech fixture %s%s missing: run `go tool task setup` (or bash scripts/fixtures.sh)", base, ext)
		}
	}
	fx := loadFixture(t, name)
	if fx.rate != 16000 {
		t.Fatalf("%s.wav: %d Hz, want 16000", base, fx.rate)
	}
	js, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var side struct {
		Segments []struct {
			Language string `json:"language"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(js, &side); err != nil {
		t.Fatalf("%s.json: %v", base, err)
	}
	r := recording{name: name, pcm: fx.pcm}
	for i, seg := range fx.segments {
		r.turns = append(r.turns, utterance{
			end:     min(len(fx.pcm), seg.End+hangover),
			text:    seg.Text,
			english: side.Segments[i].Language == "en",
		})
	}
	return r
}

// agentPrompt is the keyless agent's system prompt (examples/agents/
// local.toml), which names no time zone: get_time is asked for UTC.
const agentPrompt = "You are the phone assistant of Bistro Brisvox, a small restaurant."

// agentTools are the tools the keyless agent offers the model.
func agentTools() []providers.ToolDef {
	return []providers.ToolDef{
		{Name: "book_table", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: agent.ConfirmPendingTool, Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: agent.EndCallTool, Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string"}}}`)},
	}
}

// heldBooking is a conversation whose last turn holds book_table for the
// caller's yes or no, as the confirmation gate answers it.
func heldBooking() []agent.Message {
	call := messages.ToolCall{ID: "rules-1", ProviderID: "rules-1", Name: "book_table",
		Arguments: json.RawMessage(`{"party_size":4,"time":"19:00","name":"Sam"}`)}
	var g agent.Confirmations
	return []agent.Message{
		agent.User("book a table for four at seven under sam"),
		agent.Assistant("", []messages.ToolCall{call}),
		agent.ToolMessage(g.Request(call, 1, time.Unix(0, 0))),
		agent.Assistant("A table for four at seven PM under Sam. Shall I book it?", nil),
	}
}

// agentTurns are callers' turns the keyless agent's intents are made for
// (providers/llm/rules): the time, a booking and its slots, the reply to
// the read-back, goodbye and a greeting, each after the conversation it
// answers.
func agentTurns() []utterance {
	askTime := []agent.Message{agent.User("book a table for two"), agent.Assistant("A table for two. At what time?", nil)}
	askName := []agent.Message{agent.User("book a table for four at seven"), agent.Assistant("A table for four at seven PM. Under what name?", nil)}
	return []utterance{
		{text: "what time is it"},
		{text: "could you tell me the time please"},
		{text: "book a table for four at seven"},
		{text: "i would like to reserve a table"},
		{text: "a table for two please"},
		{text: "half past eight", history: askTime},
		{text: "under the name sam", history: askName},
		{text: "yes please", history: heldBooking()},
		{text: "no thanks", history: heldBooking()},
		{text: "goodbye"},
		{text: "that's all thank you"},
		{text: "hello"},
		{text: "good morning"},
	}
}

// Silence around each synthesized turn: before it, and the VAD-like
// hangover after it before Finalize.
const (
	turnLead = 4800 // 300 ms
	turnTail = hangover
)

// agentRecording speaks turns with flite's voice at 16 kHz, one after
// another with silence between, as one call. It skips the test when
// flite cannot run.
func agentRecording(t testing.TB, voice string, turns []utterance) recording {
	t.Helper()
	e, err := flite.New(flite.Config{Voice: voice, Rate: 16000})
	if errors.Is(err, flite.ErrNoCgo) {
		t.Skipf("flite needs cgo: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := recording{name: "agent/" + voice}
	for i, u := range turns {
		id := fmt.Sprintf("turn-%d", i)
		if err := s.Push(id, u.text); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(id); err != nil {
			t.Fatal(err)
		}
		r.pcm = append(r.pcm, make([]int16, turnLead)...)
		r.pcm = append(r.pcm, speech(t, s, id)...)
		r.pcm = append(r.pcm, make([]int16, turnTail)...)
		u.end, u.english = len(r.pcm), true
		r.turns = append(r.turns, u)
	}
	return r
}

// speech reads one flushed context's 16 kHz audio.
func speech(t testing.TB, s providers.TTSSession, id string) []int16 {
	t.Helper()
	var pcm []int16
	for {
		var ev providers.TTSEvent
		select {
		case e, ok := <-s.Events():
			if !ok {
				t.Fatalf("flite events closed before %s was flushed", id)
			}
			ev = e
		case <-time.After(time.Minute):
			t.Fatalf("no flite event for %s", id)
		}
		switch {
		case ev.Kind == providers.TTSError:
			t.Fatalf("flite: %v", ev.Err)
		case ev.ContextID != id:
			t.Fatalf("flite event of %q while reading %q", ev.ContextID, id)
		case ev.Kind == providers.TTSAudio && ev.Rate != 16000:
			t.Fatalf("flite audio at %d Hz, want 16000", ev.Rate)
		case ev.Kind == providers.TTSAudio:
			pcm = append(pcm, ev.PCM...)
		case ev.Kind == providers.TTSFlushed:
			if len(pcm) == 0 {
				t.Fatalf("flite made no audio for %s", id)
			}
			return pcm
		}
	}
}

// transcribe runs r's audio through ch and one pocketsphinx session of a
// fresh engine (its cepstral mean starts from the model's, whatever ran
// before), in 20 ms chunks with a Finalize at the end of each turn, and
// returns each turn's final.
func transcribe(t testing.TB, r recording, ch channel) []string {
	t.Helper()
	pcm := ch.apply(t, r.pcm)
	e, err := New(Config{PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := connect(t, e, t.Context())
	defer s.Close()
	out := make([]string, 0, len(r.turns))
	from := 0
	for _, u := range r.turns {
		// The speech start at the turn's first sample: the decoder hears
		// the whole turn, as it did when a session held one for life.
		if err := s.SpeechStarted(); err != nil {
			t.Fatal(err)
		}
		sendFrames(t, s, pcm[from:u.end])
		from = u.end
		if err := s.Finalize(); err != nil {
			t.Fatal(err)
		}
		_, final := untilFinal(t, s)
		out = append(out, words(final.Text))
	}
	if d := s.Dropped(); d != 0 {
		t.Fatalf("%s over %v: %d samples dropped", r.name, ch, d)
	}
	return out
}

// wer is a word error count and the reference words it is over.
type wer struct{ errs, words int }

func (w *wer) add(want, got string) {
	w.errs += wordErrors(want, got)
	w.words += len(strings.Fields(want))
}

func (w wer) rate() float64 {
	if w.words == 0 {
		return 0
	}
	return float64(w.errs) / float64(w.words)
}

func (w wer) String() string {
	return fmt.Sprintf("%5.1f%% (%d/%d)", 100*w.rate(), w.errs, w.words)
}

// werOf is the word errors of got against r's English turns.
func werOf(r recording, got []string) wer {
	var w wer
	for i, u := range r.turns {
		if u.english {
			w.add(u.text, got[i])
		}
	}
	return w
}

// answer is what the rules provider, as the keyless agent runs it, answers
// to the caller's turn said after history: its text and its tool calls
// ("text [name args]..."), so the intent and the slots it read. Its pacing
// is the shortest the config takes; run it in a synctest bubble.
func answer(t testing.TB, l *rules.LLM, history []agent.Message, said string) string {
	t.Helper()
	msgs := append([]agent.Message{agent.System(agentPrompt)}, history...)
	msgs = append(msgs, agent.User(said))
	st, err := l.Stream(context.Background(), &providers.Request{Messages: msgs, Tools: agentTools()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	var calls []string
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("rules: %v", err)
		}
		switch ev.Kind {
		case providers.LLMText:
			text.WriteString(ev.Text)
		case providers.LLMToolCall:
			for len(calls) <= ev.Index {
				calls = append(calls, "")
			}
			if ev.Name != "" {
				calls[ev.Index] += ev.Name + " "
			}
			calls[ev.Index] += ev.Args
		}
	}
	out := strings.TrimSpace(text.String())
	for _, c := range calls {
		out += " [" + c + "]"
	}
	return strings.TrimSpace(out)
}

// newRules is the rules provider at its fastest pacing.
func newRules(t testing.TB) *rules.LLM {
	t.Helper()
	l, err := rules.New(rules.Config{FirstToken: time.Nanosecond, TokenGap: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// intentOf names the intent an answer of the rules provider serves, from
// its tool calls and fixed lines (providers/llm/rules/respond.go): what
// the caller was understood to want, whatever slots were read.
func intentOf(answer string) string {
	switch {
	case strings.Contains(answer, "[get_time "):
		return "time"
	case strings.Contains(answer, "[end_call "):
		return "goodbye"
	case strings.Contains(answer, "["+agent.ConfirmPendingTool+" "):
		return "confirm"
	case strings.HasPrefix(answer, "Hello!"):
		return "greeting"
	case strings.Contains(answer, "cancelled it"):
		return "decline"
	case strings.Contains(answer, "[book_table "), strings.Contains(answer, "how many people"),
		strings.Contains(answer, "At what time?"), strings.Contains(answer, "Under what name?"):
		return "booking"
	}
	return "help"
}
