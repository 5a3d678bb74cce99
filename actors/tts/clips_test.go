package tts_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/tts"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

const phrase = "One moment, please."

// clipStore holds one second of the filler phrase at 16 kHz, its words
// spread over it (One at 0, moment, at 210 ms, please. at 631 ms).
func clipStore(t *testing.T) *tts.ClipStore {
	t.Helper()
	pcm := make([]int16, 16000)
	for i := range pcm {
		pcm[i] = 1200
	}
	c, err := tts.NewClip(phrase, 16000, pcm, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tts.NewClipStore(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func slowLookup(t *testing.T, d time.Duration) *agent.Registry {
	t.Helper()
	reg, err := agent.NewRegistry(agent.NewFuncTool(agent.Spec{Name: "look", Effect: agent.ReadOnly, Timeout: 10 * time.Second},
		func(ctx context.Context, _ json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
			select {
			case <-time.After(d):
				return agent.Output{Content: "found"}, nil
			case <-ctx.Done():
				return agent.Output{}, ctx.Err()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

type clipCall struct {
	scenario *sim.Scenario
	store    *tts.ClipStore
	tts      providertest.TTSConfig
	first    string // text before the tool
	toolTook time.Duration
	// reg and responses replace the slow lookup and its script.
	reg       *agent.Registry
	responses []providertest.Response
}

func (c clipCall) run(t *testing.T) *sim.Result {
	t.Helper()
	reg, responses := c.reg, c.responses
	if reg == nil {
		reg = slowLookup(t, c.toolTook)
		responses = []providertest.Response{
			{Text: c.first, Calls: []providertest.ScriptedCall{{ID: "a", Name: "look", Args: `{}`}}},
			{Text: "It is all set."},
			{Text: "Okay."},
		}
	}
	r, err := (&sim.Call{
		Scenario: c.scenario, Linger: 3 * time.Second, Tools: reg,
		STT: providertest.NewMockSTT(providertest.STTConfig{}, c.scenario.Utterances()),
		LLM: providertest.NewMockLLM(providertest.LLMConfig{}, responses...),
		TTS: providertest.NewMockTTS(c.tts),
		Configure: func(cfg *session.Config) {
			cfg.FillerClips = c.store
			cfg.LLMConfig.Fillers = []string{phrase}
		},
	}).Run()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func counter(r *sim.Result, stage messages.Stage, name string) uint64 {
	for _, ch := range r.Tree.Children {
		if ch.Name == string(stage) {
			return ch.Counters[name]
		}
	}
	return 0
}

func said(r *sim.Result) []string {
	var out []string
	for _, words := range sim.SaidPerTurn(r.Context) {
		out = append(out, strings.Join(words, " "))
	}
	return out
}

// TestFillerClipPlaysBetweenItsNeighbours: the filler is played from its
// clip, never sent to the provider; it comes after the audio of the text
// before the tool and before the answer's audio (the oracle lays the
// epoch out from the audio the stage sent and fails on anything out of
// order); the context holds the words as played. (Mutations seen
// failing: playing the clip at once instead of after the segment's
// Flushed — provider audio of e1 after the clip; the answer's text not
// waiting behind the clip — it goes to the closed segment.)
func TestFillerClipPlaysBetweenItsNeighbours(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The sentence before the tool plays for about five seconds; the
		// filler is due 1.2 s after the tool started and waits for it; the
		// tool answers 300 ms later, and the answer's text waits behind
		// the clip.
		long := strings.Repeat("Let me look that up for you in our booking system, it can take a little while. ", 3)
		r := clipCall{
			scenario: sim.NewScenario("clip").Silence(500*time.Millisecond).Speak("Check my booking.", time.Second).Silence(12 * time.Second),
			store:    clipStore(t),
			tts:      providertest.TTSConfig{Paced: true},
			first:    long,
			toolTook: 1500 * time.Millisecond,
		}.run(t)
		if err := sim.CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(r.Spoken, func(s string) bool { return strings.Contains(s, "moment") }) {
			t.Errorf("the provider was asked to say the filler: %q", r.Spoken)
		}
		if got := said(r); !slices.Equal(got, []string{strings.TrimSpace(long) + " One moment, please. It is all set."}) {
			t.Errorf("said %q", got)
		}
		if counter(r, messages.StageTTS, "clips_played") != 1 || counter(r, messages.StageLLM, "filler_clips") != 1 || counter(r, messages.StageTTS, "clip_waits") != 1 ||
			counter(r, messages.StageLLM, "fillers_in_context") != 1 {
			t.Errorf("clips_played %d, filler_clips %d, clip_waits %d, fillers_in_context %d; want 1 each", counter(r, messages.StageTTS, "clips_played"),
				counter(r, messages.StageLLM, "filler_clips"), counter(r, messages.StageTTS, "clip_waits"), counter(r, messages.StageLLM, "fillers_in_context"))
		}
	})
}

// firstWordAt finds when the caller started hearing word w of epoch e.
func firstWordAt(r *sim.Result, e messages.Epoch, w string) time.Time {
	for _, word := range r.Words[e] {
		if word.Text != w {
			continue
		}
		for _, rec := range r.Records {
			if rec.Kind == sim.RecordAudio && rec.Epoch == e && word.Offset >= rec.Offset && word.Offset < rec.Offset+messages.FrameDuration {
				return rec.At.Add(word.Offset - rec.Offset)
			}
		}
	}
	return time.Time{}
}

// TestBargeInCutsTheClip: the caller talks over the clip 400 ms into it:
// the context keeps the clip's heard words ("One moment,"), as for
// provider speech. The barge-in time comes from a run without it (the
// same seeded call up to that point). (Mutations seen failing: clip words
// placed from the segment's base instead of the epoch's audio so far —
// the whole phrase counts as heard; clip words not sent — the filler
// vanishes from the context.)
func TestBargeInCutsTheClip(t *testing.T) {
	base := func() *sim.Scenario {
		return sim.NewScenario("clip-cut").Silence(500*time.Millisecond).Speak("Check my booking.", time.Second)
	}
	var clipAt time.Duration
	synctest.Test(t, func(t *testing.T) {
		r := clipCall{scenario: base().Silence(8 * time.Second), store: clipStore(t), first: "Let me look.", toolTook: 3 * time.Second}.run(t)
		at := firstWordAt(r, 1, "One")
		if at.IsZero() {
			t.Fatalf("the clip was not heard: words %+v", r.Words[1])
		}
		clipAt = at.Sub(r.Start)
	})
	synctest.Test(t, func(t *testing.T) {
		gap := clipAt + 400*time.Millisecond - 1500*time.Millisecond
		s := base().Silence(gap).Speak("Wait, stop.", 800*time.Millisecond).Silence(5 * time.Second)
		r := clipCall{scenario: s, store: clipStore(t), first: "Let me look.", toolTook: 3 * time.Second}.run(t)
		if err := sim.CheckInvariants(r, 1); err != nil {
			t.Fatal(err)
		}
		got := said(r)
		if len(got) != 2 || (got[0] != "Let me look. One moment," && got[0] != "Let me look. One") {
			t.Fatalf("said %q, want the clip cut after its heard words", got)
		}
		if got[0] != "Let me look. One moment," {
			t.Errorf("said %q: at most one word fewer than heard, but this cut should keep 'moment,'", got[0])
		}
	})
}

// TestStaleClipIsDropped: the clip waits for a long sentence to finish
// when the caller barges in; it never plays, and the context keeps only
// what was heard of the sentence. (Mutation seen failing: neither the
// interrupt nor the next epoch dropping the waiting clip — it is left
// waiting, uncounted.)
func TestStaleClipIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// About five seconds of speech from 2.45 s; the filler is due at
		// about 5.5 s and waits for it; the caller barges in at 6 s.
		long := strings.Repeat("Let me look that up for you in our booking system, it can take a little while. ", 3)
		s := sim.NewScenario("clip-stale").Silence(500*time.Millisecond).Speak("Check my booking.", time.Second).
			Silence(4500*time.Millisecond).Speak("Stop.", 600*time.Millisecond).Silence(5 * time.Second)
		r := clipCall{scenario: s, store: clipStore(t), tts: providertest.TTSConfig{Paced: true}, first: long, toolTook: 5 * time.Second}.run(t)
		if err := sim.CheckInvariants(r, 1); err != nil {
			t.Fatal(err)
		}
		if counter(r, messages.StageLLM, "fillers") != 1 || counter(r, messages.StageTTS, "clips_played") != 0 || counter(r, messages.StageTTS, "clips_dropped") != 1 {
			t.Errorf("fillers %d, clips_played %d, clips_dropped %d; want 1, 0 and 1", counter(r, messages.StageLLM, "fillers"),
				counter(r, messages.StageTTS, "clips_played"), counter(r, messages.StageTTS, "clips_dropped"))
		}
		if got := said(r); len(got) != 2 || strings.Contains(got[0], "moment") {
			t.Errorf("said %q", got)
		}
	})
}

// TestClipValidation: a clip must be playable and its word timings must be
// the phrase's, in order, inside the audio. (Each case fails with its
// check removed.)
func TestClipValidation(t *testing.T) {
	pcm := make([]int16, 8000)
	w := func(text string, ms int) tts.ClipWord {
		return tts.ClipWord{Text: text, Offset: time.Duration(ms) * time.Millisecond}
	}
	tests := []struct {
		name  string
		text  string
		rate  int
		pcm   []int16
		words []tts.ClipWord
	}{
		{"empty phrase", " ", 16000, pcm, nil},
		{"bad rate", "Hi there.", 11025, pcm, nil},
		{"no audio", "Hi there.", 16000, nil, nil},
		{"word count", "Hi there.", 16000, pcm, []tts.ClipWord{w("Hi", 0)}},
		{"other word", "Hi there.", 16000, pcm, []tts.ClipWord{w("Hi", 0), w("here.", 100)}},
		{"outside the audio", "Hi there.", 16000, pcm, []tts.ClipWord{w("Hi", 0), w("there.", 500)}},
		{"out of order", "Hi there.", 16000, pcm, []tts.ClipWord{w("Hi", 200), w("there.", 100)}},
	}
	for _, tt := range tests {
		if _, err := tts.NewClip(tt.text, tt.rate, tt.pcm, tt.words); !errors.Is(err, tts.ErrInvalidClip) {
			t.Errorf("%s: err %v, want ErrInvalidClip", tt.name, err)
		}
	}
	c, err := tts.NewClip("Hi there.", 16000, pcm, []tts.ClipWord{w("Hi", 0), w("there.", 200)})
	if err != nil || c.Duration() != 500*time.Millisecond {
		t.Fatalf("valid clip: %v, duration %v", err, c.Duration())
	}
	if _, err := tts.NewClipStore(c, c); !errors.Is(err, tts.ErrInvalidClip) {
		t.Errorf("two clips of one phrase: %v", err)
	}
	spread, _ := tts.NewClip("ab cd", 16000, pcm, nil)
	if got := spread.Words(); len(got) != 2 || got[0].Offset != 0 || got[1].Offset != 300*time.Millisecond {
		t.Errorf("spread words %+v, want ab at 0 and cd at 3/5 of 500 ms", got)
	}
}

// TestBargeInDuringClipWhileABookingRuns: the caller talks over the clip
// while a 5 s booking runs; the model regenerates the identical booking.
// The clip keeps its heard prefix, the regenerated call is answered
// duplicate_call without running (the first still runs), and the
// booking's result reaches the context exactly once, as its late note.
// (Mutations seen failing: the interrupt not marking running SideEffect
// calls as orphans — the booking runs twice.)
func TestBargeInDuringClipWhileABookingRuns(t *testing.T) {
	var runs atomic.Int32
	booking := func(t *testing.T) *agent.Registry {
		reg, err := agent.NewRegistry(agent.NewFuncTool(agent.Spec{Name: "book", Effect: agent.SideEffect, Timeout: 10 * time.Second},
			func(_ context.Context, _ json.RawMessage, _ agent.CallInfo) (agent.Output, error) {
				runs.Add(1)
				time.Sleep(5 * time.Second)
				return agent.Output{Content: "booked BK-7"}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return reg
	}
	book := []providertest.ScriptedCall{{ID: "a", Name: "book", Args: `{"people":4}`}}
	script := func() []providertest.Response {
		return []providertest.Response{
			{Text: "Let me book that.", Calls: book},
			{Text: "Done."},
		}
	}
	base := func() *sim.Scenario {
		return sim.NewScenario("clip-booking").Silence(500*time.Millisecond).Speak("Book a table for four.", time.Second)
	}
	var clipAt time.Duration
	synctest.Test(t, func(t *testing.T) {
		r := clipCall{scenario: base().Silence(9 * time.Second), store: clipStore(t), reg: booking(t), responses: script()}.run(t)
		at := firstWordAt(r, 1, "One")
		if at.IsZero() {
			t.Fatalf("the clip was not heard: words %+v", r.Words[1])
		}
		clipAt = at.Sub(r.Start)
	})
	runs.Store(0)
	synctest.Test(t, func(t *testing.T) {
		gap := clipAt + 400*time.Millisecond - 1500*time.Millisecond
		s := base().Silence(gap).Speak("Sorry, go on.", 800*time.Millisecond).Silence(9 * time.Second)
		r := clipCall{scenario: s, store: clipStore(t), reg: booking(t), responses: []providertest.Response{
			{Text: "Let me book that.", Calls: book},
			{Calls: book}, // the regenerated booking
			{Text: "It is on its way."},
		}}.run(t)
		if err := sim.CheckInvariants(r, 1); err != nil {
			t.Fatal(err)
		}
		if got := said(r); len(got) != 2 || got[0] != "Let me book that. One moment," {
			t.Errorf("said %q, want the clip's heard prefix in turn 1", got)
		}
		if n := runs.Load(); n != 1 {
			t.Fatalf("the booking ran %d times", n)
		}
		results, dup := 0, 0
		for i := 0; i < r.Context.Len(); i++ {
			m := r.Context.At(i)
			results += strings.Count(m.Text, "booked BK-7")
			if m.Role == agent.RoleTool && strings.Contains(m.Text, "duplicate_call") {
				dup++
			}
		}
		if results != 1 || dup != 1 {
			t.Errorf("booking result %d times in the context, duplicate_call %d times; want 1 and 1", results, dup)
		}
	})
}
