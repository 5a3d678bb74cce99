package wholecall_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/providers/llm/rules"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

const msec = time.Millisecond

// recordingEnder records the end_call requests, as the serve layer would
// receive them.
type recordingEnder struct {
	mu    sync.Mutex
	calls []string
}

func (e *recordingEnder) EndCall(session, reason string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, session+": "+reason)
	return nil
}

func (e *recordingEnder) Calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

// agentCall is a call of the keyless default agent on the production actor
// tree: the sim's scripted caller, mock STT and TTS, the rules provider and
// the real tools (get_time on the bubble's clock, book_table behind the
// gate, end_call).
type agentCall struct {
	call  *sim.Call
	store *stock.BookingStore
	ender *recordingEnder
}

func newAgentCall(t *testing.T, s *sim.Scenario) *agentCall {
	t.Helper()
	return newAgentCallAt(t, s, 0)
}

// newAgentCallAt is newAgentCall with get_time's clock ahead of the
// bubble's by ahead.
func newAgentCallAt(t *testing.T, s *sim.Scenario, ahead time.Duration) *agentCall {
	t.Helper()
	// A model's pace, pinned: the scenarios' fillers and barge-ins were
	// timed against it (the provider's zero Config has no delay).
	l, err := rules.New(rules.Config{FirstToken: 250 * time.Millisecond, TokenGap: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a := &agentCall{store: stock.NewBookingStore(), ender: &recordingEnder{}}
	reg, err := agent.NewRegistry(stock.GetTime(stock.ClockFunc(func() time.Time { return time.Now().Add(ahead) })), stock.BookTable(a.store), stock.EndCall(a.ender))
	if err != nil {
		t.Fatal(err)
	}
	a.call = &sim.Call{
		Scenario: s,
		Linger:   3 * time.Second,
		STT:      providertest.NewMockSTT(providertest.STTConfig{}, s.Utterances()),
		TTS:      providertest.NewMockTTS(providertest.TTSConfig{}),
		Provider: l,
		Tools:    reg,
		Configure: func(cfg *session.Config) {
			cfg.LLMConfig.System = "You are the host of a bistro in Europe/Paris."
		},
	}
	return a
}

// run plays the call and checks the invariants every call is held to (the
// context is what was heard, roles in order, no stale audio).
func (a *agentCall) run(t *testing.T, slack int) *sim.Result {
	t.Helper()
	r, err := a.call.Run()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.CheckInvariants(r, slack); err != nil {
		t.Fatalf("invariants: %v\nrecords:\n%s", err, r.FingerprintText())
	}
	return r
}

// said is what the bot said in each user turn (the context, which holds
// what was heard).
func said(r *sim.Result) []string {
	var out []string
	for _, ws := range sim.SaidPerTurn(r.Context) {
		out = append(out, strings.Join(ws, " "))
	}
	return out
}

// toolRuns lists the calls in the context as "name args -> result".
func toolRuns(r *sim.Result) []string {
	names := map[string]string{}
	var out []string
	for i := 0; i < r.Context.Len(); i++ {
		m := r.Context.At(i)
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name + " " + string(c.Arguments)
		}
		if m.Role == agent.RoleTool {
			res := m.Text
			if strings.Contains(res, "confirmation_required") {
				res = "held"
			}
			out = append(out, names[m.ToolCallID]+" -> "+res)
		}
	}
	return out
}

func checkSaid(t *testing.T, r *sim.Result, want ...string) {
	t.Helper()
	if got := said(r); fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(want) {
		t.Errorf("said per turn\n got %q\nwant %q", got, want)
	}
}

// (a) "what time is it": get_time runs with the zone of the system prompt,
// and the answer speaks its result. The bubble's clock starts at midnight
// UTC on 2000-01-01; get_time's runs 15h04m ahead: 16:04 in Paris.
// Catches an answer that is not read from the tool's result (a fixed
// line), and a zone not taken from the system prompt.
func TestCallWhatTimeIsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sim.NewScenario("time").Silence(500*msec).Speak("what time is it", 1200*msec).Silence(4 * time.Second)
		a := newAgentCallAt(t, s, 15*time.Hour+4*time.Minute)
		r := a.run(t, 0)
		runs := toolRuns(r)
		if len(runs) != 1 || !strings.HasPrefix(runs[0], `get_time {"timezone":"Europe/Paris"} -> {"time":"2000-01-01T16:04:0`) {
			t.Errorf("tool runs %q", runs)
		}
		checkSaid(t, r, "It's four oh four PM.")
	})
}

// bookingScenario books a table for four at seven under Sam and answers
// the confirmation with reply.
func bookingScenario(name, reply string) *sim.Scenario {
	return sim.NewScenario(name).Silence(500*msec).
		Speak("book a table for four at seven", 1800*msec).Silence(4*time.Second).
		Speak("sam", 500*msec).Silence(6*time.Second).
		Speak(reply, 600*msec).Silence(6 * time.Second)
}

// (b) a booking over three turns: the name is asked, the call is held for
// confirmation, "yes" confirms it and book_table runs exactly once.
// Catches book_table not behind the gate (Confirm off: booked before the
// caller agreed) and a confirmation that names another call_id (nothing
// booked).
func TestCallBookingConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAgentCall(t, bookingScenario("book-yes", "yes please"))
		r := a.run(t, 0)
		checkSaid(t, r,
			"A table for four at seven PM. Under what name?",
			"A table for four at seven PM under Sam. Shall I book it?",
			"Done, your table for four at seven PM is booked. Your reference is B zero zero zero one.")
		got := a.store.Bookings()
		if len(got) != 1 || got[0] != (stock.Booking{Reference: "B-0001", PartySize: 4, Time: "19:00", Name: "Sam"}) {
			t.Errorf("bookings %+v, want one for 4 at 19:00 under Sam", got)
		}
		runs := toolRuns(r)
		want := []string{
			`book_table {"party_size":4,"time":"19:00","name":"Sam"} -> held`,
			`confirm_pending {"call_id":"t2.0"} -> booked: table for 4 at 19:00 under Sam, reference B-0001`,
		}
		if fmt.Sprint(runs) != fmt.Sprint(want) {
			t.Errorf("tool runs\n got %q\nwant %q", runs, want)
		}
	})
}

// (c) "no" instead of yes: nothing is booked, and the caller hears so.
// Catches a decline read as a confirmation.
func TestCallBookingDeclined(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAgentCall(t, bookingScenario("book-no", "no thanks"))
		r := a.run(t, 0)
		checkSaid(t, r,
			"A table for four at seven PM. Under what name?",
			"A table for four at seven PM under Sam. Shall I book it?",
			"Okay, I have cancelled it. Nothing is booked.")
		if got := a.store.Bookings(); len(got) != 0 {
			t.Errorf("bookings %+v after a no", got)
		}
	})
}

// bargeIn is (d)'s caller: the greeting starts about 0.9 s after the end
// of "hello" (at 1.3 s) and lasts over 4 s; the caller talks over it at
// 3.7 s, where the pacer's margin leaves no heard word out of the context
// (so a context that keeps one word more than was heard shows).
func bargeIn() *sim.Scenario {
	return sim.NewScenario("barge").Silence(500*msec).Speak("hello", 800*msec).
		Silence(2400*msec).Speak("what time is it", 1200*msec).Silence(4 * time.Second)
}

// checkBargeIn: the invariants hold (the context is what was heard, at
// most one word short at the cut), one interrupt reached the client, the
// greeting was cut part way, and the next turn was answered.
func checkBargeIn(r *sim.Result) error {
	if err := sim.CheckInvariants(r, 1); err != nil {
		return err
	}
	if n := r.Interrupts(); n != 1 {
		return fmt.Errorf("%d interrupts, want 1", n)
	}
	turns := sim.SaidPerTurn(r.Context)
	full := strings.Fields(greeting)
	if len(turns) != 2 || len(turns[0]) == 0 || len(turns[0]) >= len(full) {
		return fmt.Errorf("said %q: want the greeting cut part way", turns)
	}
	if got := strings.Join(turns[0], " "); !strings.HasPrefix(greeting, got) {
		return fmt.Errorf("the cut greeting %q is not a prefix of the greeting", got)
	}
	if got := strings.Join(turns[1], " "); got != "It's one AM." {
		return fmt.Errorf("second turn said %q", got)
	}
	return nil
}

const greeting = "Hello! I can tell you the time or book a table. How can I help?"

// (d) a barge-in in the middle of the greeting cuts it: the context holds
// only what was heard, and the next turn is answered. The check catches
// the sim's engine mutations unheard_word_kept (the context keeps a word
// the caller never heard) and dropped_interrupt_at_output (the clear never
// reaches the client): both are run and must fail it.
func TestCallBargeIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := newAgentCall(t, bargeIn()).call.Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := checkBargeIn(r); err != nil {
			t.Fatalf("%v\nrecords:\n%s", err, r.FingerprintText())
		}
	})
	for _, m := range sim.Mutations() {
		if m.Name != "unheard_word_kept" && m.Name != "dropped_interrupt_at_output" {
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newAgentCall(t, bargeIn()).call
				m.Apply(c)
				r, err := c.Run()
				if err == nil && checkBargeIn(r) == nil {
					t.Errorf("the barge-in check passed under %s", m.Name)
				}
			})
		})
	}
}

// (e) "goodbye": the goodbye line is spoken and end_call is called once,
// for this call. Catches a second end_call in the response (or a goodbye
// without one).
func TestCallGoodbye(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sim.NewScenario("bye").Silence(500*msec).Speak("thanks goodbye", 1000*msec).Silence(4 * time.Second)
		a := newAgentCall(t, s)
		r := a.run(t, 0)
		checkSaid(t, r, "Thank you for calling. Goodbye!")
		if got := a.ender.Calls(); len(got) != 1 || got[0] != "sim-bye: the caller said goodbye" {
			t.Errorf("end_call requests %q, want one for sim-bye", got)
		}
	})
}
