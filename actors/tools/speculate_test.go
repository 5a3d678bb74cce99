package tools_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/tools"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// bench runs the tools actor alone under a stand-in session: a round
// stand-in asks for every RunTools (the tools actor answers it), and the
// llm child records the late results the tools actor sends it.
type bench struct {
	t     *testing.T
	sys   *kit.System
	sess  *actor.PID
	tools *actor.PID
	round *actor.PID
	got   chan any
	late  []*messages.LateResult
}

// wrongPath marks results that reached the llm stand-in: the tools actor
// answers the round.
type wrongPath struct{ m *messages.ToolResults }

// standIn is the session: it spawns the recording llm and the tools actor
// under the names kit.Peers expects.
type standIn struct {
	props func(kit.Peers) *actor.Props
	got   chan any
}

func (s *standIn) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		peers := kit.NewPeers("spec-call", ctx.Self())
		got := s.got
		_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *messages.ToolResults:
				got <- wrongPath{m}
			case *messages.LateResult:
				got <- m
			}
		}), string(messages.StageLLM))
		_, _ = ctx.SpawnNamed(s.props(peers), string(messages.StageTools))
	}
}

func newBench(t *testing.T, reg *agent.Registry, log zerolog.Logger) *bench {
	b := &bench{t: t, sys: kit.NewSystem(zerolog.Nop()), got: make(chan any, 64)}
	b.sess = b.sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
		return &standIn{got: b.got, props: func(p kit.Peers) *actor.Props { return tools.Props(reg, p, log) }}
	}))
	b.tools = kit.NewPeers("spec-call", b.sess).Tools
	got := b.got
	b.round = b.sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*messages.ToolResults); ok {
			got <- m
		}
	}))
	synctest.Wait() // the stand-in has spawned its children
	return b
}

// send sends m to the tools actor; a RunTools comes from the round.
func (b *bench) send(m any) {
	if _, ok := m.(*messages.RunTools); ok {
		b.sys.Root.RequestWithCustomSender(b.tools, m, b.round)
		return
	}
	b.sys.Root.Send(b.tools, m)
}

// results returns the ToolResults the round received so far (after the
// actors went quiet), and keeps the late results the llm received.
func (b *bench) results() []*messages.ToolResults {
	synctest.Wait()
	var out []*messages.ToolResults
	for {
		select {
		case m := <-b.got:
			switch m := m.(type) {
			case *messages.ToolResults:
				out = append(out, m)
			case *messages.LateResult:
				b.late = append(b.late, m)
			case wrongPath:
				b.t.Errorf("results of round %d went to the llm", m.m.Round)
			}
		default:
			return out
		}
	}
}

func (b *bench) stop() {
	if err := b.sys.Root.StopFuture(b.sess).Wait(); err != nil {
		b.t.Fatal(err)
	}
	if err := b.sys.Root.StopFuture(b.round).Wait(); err != nil {
		b.t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
}

// flat lists every result's outcome, round by round.
func flat(rs []*messages.ToolResults) []string {
	var out []string
	for _, r := range rs {
		out = append(out, outcomes(r)...)
	}
	return out
}

func outcomes(r *messages.ToolResults) []string {
	var out []string
	for _, x := range r.Results {
		out = append(out, x.CallID+"="+x.Outcome)
	}
	return out
}

func specRegistry(t *testing.T, p *probe) *agent.Registry {
	reg, err := agent.NewRegistry(p.tool("book", agent.SideEffect, 100*time.Millisecond), p.tool("lookup", agent.ReadOnly, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

var (
	bookCall   = messages.ToolCall{ID: "t1.0", Name: "book", Arguments: []byte(`{}`)}
	lookupCall = messages.ToolCall{ID: "t1.1", Name: "lookup", Arguments: []byte(`{}`)}
)

// TestSpeculationHoldsSideEffectsUntilCommit: a speculative round runs
// its ReadOnly call at once and holds the booking; nothing is answered
// before the commit; the commit runs the booking and the results come in
// issue order, the booking first. (Mutations seen failing: no hold — the
// booking runs at speculation time; commit not starting the held calls —
// no results ever; results in completion order — lookup first.)
func TestSpeculationHoldsSideEffectsUntilCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		b := newBench(t, specRegistry(t, p), zerolog.Nop())
		t0 := time.Now()
		b.send(&messages.RunTools{Epoch: 1, Calls: []messages.ToolCall{bookCall, lookupCall}, Speculative: true})
		time.Sleep(time.Second)
		if got := b.results(); len(got) != 0 {
			t.Fatalf("results before the commit: %v", flat(got))
		}
		if p.count("book") != 0 || p.count("lookup") != 1 || !p.startOf("lookup").Equal(t0) {
			t.Fatalf("before the commit: runs %v, lookup started %v", p.runs, p.startOf("lookup").Sub(t0))
		}
		commitAt := time.Now()
		b.send(&messages.Commit{Turn: messages.UserTurn{Epoch: 1}})
		time.Sleep(time.Second)
		got := b.results()
		if len(got) != 1 || strings.Join(outcomes(got[0]), " ") != "t1.0=ok t1.1=ok" {
			t.Fatalf("after the commit: %d results %v", len(got), flat(got))
		}
		if p.count("book") != 1 || !p.startOf("book").Equal(commitAt) {
			t.Fatalf("booking ran %d times, started %v after the commit", p.count("book"), p.startOf("book").Sub(commitAt))
		}
		b.stop()
	})
}

// TestDiscardedSpeculationNeverRunsHeldCalls: the caller spoke again; the
// held booking never runs, the ReadOnly call is cancelled, no result goes
// to the model, and a round of the discarded turn that arrives later is
// answered stale_turn without running. (Mutations seen failing: discard
// not raising the stale floor — the late round's booking runs; held calls
// started at the discard.)
func TestDiscardedSpeculationNeverRunsHeldCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		reg, err := agent.NewRegistry(p.tool("book", agent.SideEffect, time.Second), p.tool("lookup", agent.ReadOnly, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		b := newBench(t, reg, zerolog.Nop())
		b.send(&messages.RunTools{Epoch: 1, Calls: []messages.ToolCall{bookCall, lookupCall}, Speculative: true})
		time.Sleep(100 * time.Millisecond)
		b.send(&messages.Discard{Epoch: 1})
		time.Sleep(2 * time.Second)
		if got := b.results(); len(got) != 0 {
			t.Fatalf("a discarded speculation answered the model: %v", flat(got))
		}
		if p.count("book") != 0 || !p.wasCancelled("lookup") {
			t.Fatalf("after the discard: runs %v, lookup cancelled %v", p.runs, p.wasCancelled("lookup"))
		}
		b.send(&messages.RunTools{Epoch: 1, Round: 1, Calls: []messages.ToolCall{{ID: "t1.2", Name: "book", Arguments: []byte(`{}`)}}, Speculative: true})
		got := b.results()
		if len(got) != 1 || strings.Join(outcomes(got[0]), " ") != "t1.2=stale_turn" || p.count("book") != 0 {
			t.Fatalf("late round of a discarded turn: %v, runs %v", flat(got), p.runs)
		}
		b.stop()
	})
}

// TestCommitOfSupersededSpeculationRunsNothing: a newer turn's round came
// before the commit; the held booking is answered stale_turn and never
// runs. (Mutation seen failing: commit without the stale check.)
func TestCommitOfSupersededSpeculationRunsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		b := newBench(t, specRegistry(t, p), zerolog.Nop())
		b.send(&messages.RunTools{Epoch: 1, Calls: []messages.ToolCall{bookCall}, Speculative: true})
		b.send(&messages.RunTools{Epoch: 2, Calls: []messages.ToolCall{{ID: "t2.0", Name: "lookup", Arguments: []byte(`{}`)}}})
		time.Sleep(time.Second)
		b.send(&messages.Commit{Turn: messages.UserTurn{Epoch: 1}})
		time.Sleep(time.Second)
		var all []string
		for _, r := range b.results() {
			all = append(all, outcomes(r)...)
		}
		slices.Sort(all)
		if strings.Join(all, " ") != "t1.0=stale_turn t2.0=ok" || p.count("book") != 0 {
			t.Fatalf("results %v, runs %v", all, p.runs)
		}
		b.stop()
	})
}

// TestCommitSpendsNoBudget: a speculative round with a malformed call
// spends one of the turn's two retries when it is admitted, not again at
// its commit; a held call of a turn whose budget ran out since the
// speculation is answered budget_exhausted without running. (Mutations
// seen failing: commit counting a malformed round again — the second
// turn's third malformed round is not the one that exhausts; commit
// without the budget check — the booking runs.)
func TestCommitSpendsNoBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		b := newBench(t, specRegistry(t, p), zerolog.Nop())
		// Turn 1: speculation with a malformed call, committed; then one
		// more malformed round still runs (2 spent, the budget is 2).
		b.send(&messages.RunTools{Epoch: 1, Calls: []messages.ToolCall{bookCall}, Malformed: 1, Speculative: true})
		b.send(&messages.Commit{Turn: messages.UserTurn{Epoch: 1}})
		b.send(&messages.RunTools{Epoch: 1, Round: 1, Calls: []messages.ToolCall{{ID: "t1.5", Name: "lookup", Arguments: []byte(`{}`)}}, Malformed: 1})
		time.Sleep(time.Second)
		var all []string
		for _, r := range b.results() {
			all = append(all, outcomes(r)...)
		}
		slices.Sort(all) // two rounds finish at the same instant
		if strings.Join(all, " ") != "t1.0=ok t1.5=ok" {
			t.Fatalf("turn 1: %v", all)
		}
		// Turn 2: the speculation holds a booking; two more malformed
		// rounds of the turn follow (the model went on with the ReadOnly
		// results): the third spent round exhausts the budget, and the
		// commit answers the held booking budget_exhausted.
		book2 := messages.ToolCall{ID: "t2.0", Name: "book", Arguments: []byte(`{"n":2}`)}
		b.send(&messages.RunTools{Epoch: 2, Calls: []messages.ToolCall{book2}, Malformed: 1, Speculative: true})
		b.send(&messages.RunTools{Epoch: 2, Round: 1, Calls: nil, Malformed: 1, Speculative: true})
		b.send(&messages.RunTools{Epoch: 2, Round: 2, Calls: nil, Malformed: 1, Speculative: true})
		time.Sleep(time.Second)
		b.send(&messages.Commit{Turn: messages.UserTurn{Epoch: 2}})
		time.Sleep(time.Second)
		all = nil
		for _, r := range b.results() {
			all = append(all, outcomes(r)...)
		}
		if strings.Join(all, " ") != "t2.0=budget_exhausted" || p.count("book") != 1 {
			t.Fatalf("turn 2: %v, runs %v", all, p.runs)
		}
		b.stop()
	})
}

// TestResultsGoToTheRoundThatAsked: the tools actor answers the round
// (the sender of RunTools), never the llm, and keeps the results until
// the round's end says whether it took them. A SideEffect result the round
// left untaken — answered before its end, or finishing after it — reaches
// the llm exactly once as a late result, with the outcome the tool gave;
// a ReadOnly one and a refusal that ran nothing are dropped; results the
// round took are never reported. (Mutations seen failing: results sent to
// the llm actor — they reach the wrong path; RoundEnded not consulting the
// sent results — no late result for the untaken booking; a round gone
// before its results not checked — the late booking is answered to a
// round that ended; untaken results reported for every RoundEnded — the
// taken booking comes back as a note.)
func TestResultsGoToTheRoundThatAsked(t *testing.T) {
	book := func(id string) messages.ToolCall {
		return messages.ToolCall{ID: id, Name: "book", Arguments: []byte(`{}`)}
	}
	look := func(id string) messages.ToolCall {
		return messages.ToolCall{ID: id, Name: "lookup", Arguments: []byte(`{}`)}
	}
	tests := []struct {
		name string
		// endAt is when the round ends, after its RunTools at 0 (the
		// tools take 100 ms); waiting says it had not taken the results.
		endAt    time.Duration
		waiting  bool
		calls    []messages.ToolCall
		answered []string // the round's results
		late     []string // the llm's late results
	}{
		{"taken", time.Second, false, []messages.ToolCall{book("t1.0"), look("t1.1")}, []string{"t1.0=ok t1.1=ok"}, nil},
		{"sent, left untaken", time.Second, true, []messages.ToolCall{book("t1.0"), look("t1.1")}, []string{"t1.0=ok t1.1=ok"}, []string{"t1.0=ok"}},
		{"ended before they came", 50 * time.Millisecond, true, []messages.ToolCall{book("t1.0"), look("t1.1")}, nil, []string{"t1.0=ok"}},
		{"ended while only ReadOnly ran", 50 * time.Millisecond, true, []messages.ToolCall{look("t1.0")}, nil, nil},
		{"refused, left untaken", time.Second, true, []messages.ToolCall{{ID: "t1.0", Name: "nope"}}, []string{"t1.0=unknown_tool"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newProbe()
				b := newBench(t, specRegistry(t, p), zerolog.Nop())
				b.send(&messages.RunTools{Epoch: 1, Calls: tt.calls})
				time.Sleep(tt.endAt)
				b.send(&messages.RoundEnded{Epoch: 1, Waiting: tt.waiting})
				time.Sleep(time.Second)
				var answered, late []string
				for _, r := range b.results() {
					answered = append(answered, strings.Join(outcomes(r), " "))
				}
				for _, l := range b.late {
					late = append(late, l.Result.CallID+"="+l.Result.Outcome)
				}
				if !slices.Equal(answered, tt.answered) || !slices.Equal(late, tt.late) {
					t.Errorf("the round got %q and the llm %q, want %q and %q", answered, late, tt.answered, tt.late)
				}
				// A second end of the same round reports nothing again.
				b.send(&messages.RoundEnded{Epoch: 1, Waiting: tt.waiting})
				b.results()
				if len(b.late) != len(tt.late) {
					t.Errorf("%d late results after a second RoundEnded, want %d", len(b.late), len(tt.late))
				}
				b.stop()
			})
		})
	}
}

// TestHeldCallTraced: a held call emits "tool call held" (outcome held)
// at speculation time and its settle event after the commit, without its
// arguments. (Mutation seen failing: no held event.)
func TestHeldCallTraced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe()
		var buf bytes.Buffer
		log := zerolog.New(&buf).Level(zerolog.DebugLevel)
		b := newBench(t, specRegistry(t, p), log)
		secret := messages.ToolCall{ID: "t1.0", Name: "book", Arguments: []byte(`{"card":"4111-SECRET"}`)}
		b.send(&messages.RunTools{Epoch: 1, Calls: []messages.ToolCall{secret}, Speculative: true})
		time.Sleep(500 * time.Millisecond)
		b.send(&messages.Commit{Turn: messages.UserTurn{Epoch: 1}})
		time.Sleep(time.Second)
		b.results()
		b.stop()
		out := buf.String()
		held := strings.Index(out, `"outcome":"held"`)
		settled := strings.Index(out, `"outcome":"ok"`)
		if held < 0 || settled < held || !strings.Contains(out, `"message":"tool call held"`) {
			t.Fatalf("trace:\n%s", out)
		}
		if strings.Contains(out, "SECRET") {
			t.Fatal("arguments in the trace")
		}
	})
}
