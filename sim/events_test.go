package sim

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/switchboard"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
)

// eventLog keeps a call's live events.
type eventLog struct {
	mu  sync.Mutex
	evs []messages.CallEvent
}

func (r *eventLog) add(e messages.CallEvent) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *eventLog) events() []messages.CallEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]messages.CallEvent(nil), r.evs...)
}

// wordsOf is the text of the bot words reported for epoch e.
func wordsOf(evs []messages.CallEvent, e messages.Epoch) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == messages.EventBotWord && ev.Epoch == e {
			out = append(out, ev.Text)
		}
	}
	return out
}

// TestLiveEvents plays a greeting, a question and a barge-in into the long
// answer, and checks the events a call's page shows: the greeting's words,
// the caller's turns, the answer's words as played and cut at the barge-in
// (as many as the context kept, or one more inside the lead margin), each
// turn's latency equal to its timeline, and the state changes.
func TestLiveEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScenario("events").Silence(3000*msec).Speak("Tell me about your opening hours.", 1000*msec).
			Silence(1500*msec).Speak("Wait.", 600*msec).Silence(3000 * msec)
		c := base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Okay."})
		rec := &eventLog{}
		c.Configure = func(cfg *session.Config) {
			cfg.Greeting = "Hello there, how can I help?"
			cfg.OnEvent = rec.add
		}
		r, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		evs := rec.events()
		if len(evs) == 0 || evs[0].Kind != messages.EventState || evs[0].State != messages.StateListening {
			t.Fatalf("first event %+v, want state listening", evs[:min(1, len(evs))])
		}
		if last := evs[len(evs)-1]; last.Kind != messages.EventState || last.State != messages.StateEnded {
			t.Errorf("last event %+v, want state ended", last)
		}
		// The greeting (epoch 1) played whole. Mutation: greet dropped in
		// the turn actor -> no words for epoch 1.
		if got := strings.Join(wordsOf(evs, 1), " "); got != "Hello there, how can I help?" {
			t.Errorf("greeting words %q", got)
		}
		var turns []string
		done := map[messages.Epoch]bool{}
		latencies := map[messages.Epoch]time.Duration{}
		stages := map[messages.Epoch][]messages.TurnStage{}
		states := []string{}
		for _, ev := range evs {
			switch ev.Kind {
			case messages.EventUserTurn:
				turns = append(turns, ev.Text)
			case messages.EventBotDone:
				done[ev.Epoch] = ev.Cut
			case messages.EventBotWord:
				if _, ok := done[ev.Epoch]; ok {
					t.Errorf("word %q of epoch %d after its end", ev.Text, ev.Epoch)
				}
			case messages.EventLatency:
				latencies[ev.Epoch] = ev.Latency
				stages[ev.Epoch] = ev.Stages
			case messages.EventState:
				states = append(states, ev.State)
			}
		}
		if want := []string{"Tell me about your opening hours.", "Wait."}; strings.Join(turns, "|") != strings.Join(want, "|") {
			t.Errorf("user turns %q, want %q", turns, want)
		}
		// The long answer was cut; its words stop where the context stops
		// (plus at most the one word inside the lead margin).
		eps := r.TurnEpochs()
		if len(eps) != 2 {
			t.Fatalf("turn epochs %v", eps)
		}
		cutEp := eps[0]
		if cut, ok := done[cutEp]; !ok || !cut {
			t.Errorf("epoch %d: bot_done cut=%v seen=%v, want a cut", cutEp, cut, ok)
		}
		told := wordsOf(evs, cutEp)
		kept := saidTurn(r, 0) // the greeting is not counted: no user message before it
		full := strings.Fields(longAnswer)
		if len(told) == 0 || len(told) >= len(full) || strings.Join(told, " ") != strings.Join(full[:len(told)], " ") {
			t.Errorf("cut answer's words %q: want a proper prefix of the answer", told)
		}
		if len(told) < len(kept) || len(told) > len(kept)+1 {
			t.Errorf("%d words shown as played, %d kept in the context", len(told), len(kept))
		}
		if got := strings.Join(wordsOf(evs, eps[1]), " "); got != "Okay." {
			t.Errorf("second answer's words %q", got)
		}
		// Latency events match the timelines. Mutation: latency measured
		// from the turn end instead of the end of speech -> mismatch.
		for _, tl := range r.Timelines {
			end, ok1 := tl.Marks[messages.MarkVADStop]
			out, ok2 := tl.Marks[messages.MarkFirstAudioOut]
			if !ok1 || !ok2 {
				continue
			}
			if got, ok := latencies[tl.Epoch]; !ok || got != out.Sub(end) {
				t.Errorf("epoch %d latency event %v (seen %v), timeline %v", tl.Epoch, got, ok, out.Sub(end))
			}
			// The page's latency bar: the stages, in order, sum to the
			// latency. Mutation: the session sends no Stages -> none here.
			var sum time.Duration
			var names []string
			for _, st := range stages[tl.Epoch] {
				sum += st.D
				names = append(names, st.Name)
			}
			if sum != out.Sub(end) || strings.Join(names, ",") != "listen,end_of_turn,think,voice,send" {
				t.Errorf("epoch %d stages %v (sum %v), want listen..send summing to %v", tl.Epoch, stages[tl.Epoch], sum, out.Sub(end))
			}
		}
		if len(latencies) != 2 {
			t.Errorf("latency events for %d turns, want 2", len(latencies))
		}
		want := []string{"listening", "speaking", "listening", "thinking", "speaking", "listening", "thinking", "speaking", "listening", "ended"}
		if strings.Join(states, ",") != strings.Join(want, ",") {
			t.Errorf("states %v\nwant %v", states, want)
		}
	})
}

// TestEndCallAfterPlayout: the end_call tool's EndCall{AfterPlayout} lets
// the current answer play out whole (a barge-in no longer cuts it), then
// the call ends, long before the caller's script does. Mutation: handling
// it like an operator's EndCall (interrupt first) -> the answer is cut.
func TestEndCallAfterPlayout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScenario("goodbye").Silence(500*msec).Speak("Tell me about your opening hours.", 1000*msec).
			Silence(2000*msec).Speak("Wait.", 600*msec).Silence(30 * time.Second)
		c := base(s, providertest.Response{Text: longAnswer}, providertest.Response{Text: "Okay."})
		log := &eventLog{}
		c.Configure = func(cfg *session.Config) { cfg.OnEvent = log.add }
		c.During = []Action{{At: 3000 * msec, Do: func(h *Handle) {
			h.System.Root.Send(h.Board, &switchboard.ToCall{Call: h.Call, Msg: &messages.EndCall{AfterPlayout: true}})
		}}}
		start := time.Now()
		r, err := c.Run()
		if !errors.Is(err, ErrCallFailed) || r == nil || r.Ended.Reason != "ended by the agent" {
			t.Fatalf("want the call to end early, by the agent; got %v, %+v", err, r)
		}
		evs := log.events()
		var turns []string
		cut, seen := false, false
		for _, ev := range evs {
			switch ev.Kind {
			case messages.EventUserTurn:
				turns = append(turns, ev.Text)
			case messages.EventBotDone:
				cut, seen = ev.Cut, true
			}
		}
		if len(turns) != 1 {
			t.Errorf("user turns %q, want only the first (the barge-in ignored while ending)", turns)
		}
		if got := strings.Join(wordsOf(evs, 1), " "); got != longAnswer || !seen || cut {
			t.Errorf("answer played %q (done %v, cut %v), want it whole", got, seen, cut)
		}
		if took := time.Since(start); took > 25*time.Second {
			t.Errorf("call took %v: it did not end after the answer", took)
		}
	})
}
