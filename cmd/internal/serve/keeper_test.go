package serve

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/sim"
)

// fakeKeeper records what the server tells it.
type fakeKeeper struct {
	mu     sync.Mutex
	starts []CallStart
	events []messages.EventKind
	ends   []messages.CallEnded
	frames struct{ in, out int }
}

func (k *fakeKeeper) Begin(c CallStart) Follower {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.starts = append(k.starts, c)
	return &fakeFollower{k: k}
}

type fakeFollower struct{ k *fakeKeeper }

func (f *fakeFollower) Event(e *messages.CallEvent) {
	f.k.mu.Lock()
	f.k.events = append(f.k.events, e.Kind)
	f.k.mu.Unlock()
}
func (f *fakeFollower) End(e messages.CallEnded) {
	f.k.mu.Lock()
	f.k.ends = append(f.k.ends, e)
	f.k.mu.Unlock()
}
func (f *fakeFollower) Tap() conn.Tap   { return f }
func (f *fakeFollower) TraceID() string { return "4bf92f3577b34da6a3ce929d0e0e4736" }
func (f *fakeFollower) Input(*messages.AudioFrame) {
	f.k.mu.Lock()
	f.k.frames.in++
	f.k.mu.Unlock()
}
func (f *fakeFollower) Output(*messages.OutputAudio) {
	f.k.mu.Lock()
	f.k.frames.out++
	f.k.mu.Unlock()
}

// digestAgent is a simAgent that knows its file's digest.
type digestAgent struct{ *simAgent }

func (digestAgent) Digest() string { return "d1" }

// TestKeeperFollowsACall: the keeper is told the call's start (transport,
// direction, agent and its digest, rates, admission time), every live
// event (the page's and the record's kinds), the call's end once, and
// its tap sees the audio both ways. Mutations caught: Begin not called
// (no start), the events not handed on (no events), End not called from
// OnEnd (no end), the tap not set in the session's config (no frames).
func TestKeeperFollowsACall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKeeper{}
		s, _, stop := serving(t, Config{MaxCalls: 2, Keeper: k}, digestAgent{&simAgent{responses: []providertest.Response{{Text: "Hi, how can I help?"}}}})
		c := newFakeConn("c1", sim.NewScenario("hello").Silence(500*msec).Speak("Hello?", 800*msec).Silence(4*time.Second))
		a, err := s.Admit()
		if err != nil {
			t.Fatal(err)
		}
		c.adm = a
		s.Start(c)
		time.Sleep(4 * time.Second)
		c.HangUp()
		time.Sleep(time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		k.mu.Lock()
		defer k.mu.Unlock()
		if len(k.starts) != 1 {
			t.Fatalf("%d starts", len(k.starts))
		}
		st := k.starts[0]
		if st.ID != "c1" || st.Direction != "inbound" || st.Agent == "" || st.AgentDigest != "d1" ||
			st.InputRate != c.InputRate() || st.OutputRate != c.OutputRate() || st.Started.IsZero() || st.Answered.Before(st.Started) {
			t.Errorf("start %+v", st)
		}
		var latency, turn bool
		for _, e := range k.events {
			latency = latency || e == messages.EventLatency
			turn = turn || e == messages.EventUserTurn
		}
		if !latency || !turn {
			t.Errorf("events %v: want the user's turn and its latency", k.events)
		}
		if len(k.ends) != 1 || k.ends[0].Call != "c1" || k.ends[0].Reason == ReasonNotStarted {
			t.Errorf("ends %+v", k.ends)
		}
		if k.frames.in == 0 || k.frames.out == 0 {
			t.Errorf("tap saw %d frames in, %d out", k.frames.in, k.frames.out)
		}
	})
}

// emptyAgent gives every call a session config without providers, which
// session.Props refuses: the call fails after the keeper's Begin.
type emptyAgent struct{ *simAgent }

func (emptyAgent) Session(CallEnv) (session.Config, error) { return session.Config{}, nil }

// TestKeeperHearsACallThatDidNotStart: a call whose session is refused
// after Begin still ends for the keeper, with ReasonNotStarted, so its
// live journal entry is closed. Mutation caught: the deferred End
// dropped (no end: the call would be recovered as crashed).
func TestKeeperHearsACallThatDidNotStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := &fakeKeeper{}
		s, _, stop := serving(t, Config{MaxCalls: 2, Keeper: k}, emptyAgent{&simAgent{}})
		c := newFakeConn("c2", sim.NewScenario("x").Silence(time.Second))
		a, err := s.Admit()
		if err != nil {
			t.Fatal(err)
		}
		c.adm = a
		s.Start(c)
		time.Sleep(time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		k.mu.Lock()
		defer k.mu.Unlock()
		if len(k.starts) != 1 || len(k.ends) != 1 || k.ends[0].Reason != ReasonNotStarted {
			t.Fatalf("starts %d, ends %+v", len(k.starts), k.ends)
		}
	})
}
