package tools_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/tools"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// eventSink is a session that keeps the live events it is sent.
type eventSink struct {
	mu     sync.Mutex
	events []messages.CallEvent
}

func (s *eventSink) receive(c actor.Context) {
	if e, ok := c.Message().(*messages.CallEvent); ok {
		s.mu.Lock()
		s.events = append(s.events, *e)
		s.mu.Unlock()
	}
}

func (s *eventSink) all() []messages.CallEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// keyTool is a tool that takes d and keeps the idempotency key it was
// given in its external form (what it would pass downstream).
type keyTool struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyTool) tool(name string, effect agent.Effect, timeout, d time.Duration) agent.Tool {
	return agent.NewFuncTool(agent.Spec{Name: name, Effect: effect, Timeout: timeout},
		func(ctx context.Context, _ json.RawMessage, info agent.CallInfo) (agent.Output, error) {
			if effect == agent.SideEffect {
				k.mu.Lock()
				k.keys = append(k.keys, info.IdempotencyKey.String())
				k.mu.Unlock()
			}
			select {
			case <-time.After(d):
				return agent.Output{Content: name + " result"}, nil
			case <-ctx.Done():
				return agent.Output{}, ctx.Err()
			}
		})
}

func (k *keyTool) digests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, key := range k.keys {
		sum := sha256.Sum256([]byte(key))
		out = append(out, hex.EncodeToString(sum[:]))
	}
	return out
}

// settled is a settle line as the test expects it: the page's outcome and
// the audit (Started as an offset from the round's start, KeyDigest "key"
// for the digest of the key the tool was given).
type settled struct {
	call, page, outcome string
	started, at         time.Duration
	key                 bool
	args, result        string
}

// TestSettledCallsCarryTheirAudit: every settled tool line carries the
// record's audit (the contract's outcome, the call's start, the digest of
// the SideEffect call's idempotency key as the tool got it, its arguments
// and the content the model got), once per settle; a running line carries
// none; with nobody observing the call, the actor sends no event at all.
// Mutations caught (seen failing): the audit's Outcome from the page's
// outcome (done for ok: every case with a settle), Started stamped at the
// settle (read only, side effect, slot timeout), the dispatch's start not
// kept ("slot timeout then late": the late line has no start), the
// flight not keeping its slot's audit ("slot timeout then late": no key
// on the late line), a digest for a ReadOnly call ("read only"), and
// tellSettled sending without the observer ("off").
func TestSettledCallsCarryTheirAudit(t *testing.T) {
	const (
		lookupArgs = `{"city":"Leeds"}`
		bookArgs   = `{"table":4}`
	)
	cases := []struct {
		name    string
		off     bool
		calls   []messages.ToolCall
		running int // running lines (starts)
		want    []settled
	}{
		{name: "read only", calls: []messages.ToolCall{{ID: "t1.0", Name: "lookup", Arguments: json.RawMessage(lookupArgs)}},
			running: 1,
			want:    []settled{{call: "t1.0", page: messages.CallDone, outcome: agent.OutcomeOK, at: 200 * time.Millisecond, args: lookupArgs, result: "lookup result"}}},
		{name: "side effect", calls: []messages.ToolCall{{ID: "t1.0", Name: "book", Arguments: json.RawMessage(bookArgs)}},
			running: 1,
			want:    []settled{{call: "t1.0", page: messages.CallDone, outcome: agent.OutcomeOK, at: 300 * time.Millisecond, key: true, args: bookArgs, result: "book result"}}},
		{name: "refused in planning", calls: []messages.ToolCall{{ID: "t1.0", Name: "nosuch", Arguments: json.RawMessage(`{}`)}},
			want: []settled{{call: "t1.0", page: messages.CallRefused, outcome: agent.KindUnknownTool, args: `{}`,
				result: `{"error":"unknown_tool","tool":"nosuch","detail":"no tool of this name is available"}`}}},
		{name: "slot timeout then late", calls: []messages.ToolCall{{ID: "t1.0", Name: "slow_book", Arguments: json.RawMessage(bookArgs)}},
			running: 1,
			want: []settled{
				{call: "t1.0", page: messages.CallRunning, outcome: "timed_out_running", at: time.Second, key: true, args: bookArgs,
					result: `{"error":"timeout","tool":"slow_book","detail":"the call is taking longer than expected and is still running; its result follows as a note: do not repeat it"}`},
				{call: "t1.0", page: messages.CallDone, outcome: agent.OutcomeOK, at: 2 * time.Second, key: true, args: bookArgs, result: "slow_book result"}}},
		{name: "off", off: true, calls: []messages.ToolCall{
			{ID: "t1.0", Name: "lookup", Arguments: json.RawMessage(lookupArgs)},
			{ID: "t1.1", Name: "book", Arguments: json.RawMessage(bookArgs)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				kt := &keyTool{}
				reg, err := agent.NewRegistry(
					kt.tool("lookup", agent.ReadOnly, 10*time.Second, 200*time.Millisecond),
					kt.tool("book", agent.SideEffect, 10*time.Second, 300*time.Millisecond),
					kt.tool("slow_book", agent.SideEffect, time.Second, 2*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				sys := kit.NewSystem(zerolog.Nop())
				sink := &eventSink{}
				session := sys.Root.Spawn(actor.PropsFromFunc(sink.receive))
				llm := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
				pid := sys.Root.Spawn(tools.Props(reg, kit.Peers{Call: "call-1", Session: session, LLM: llm, Events: !c.off}, zerolog.Nop()))
				start := time.Now()
				f := sys.Root.RequestFuture(pid, &messages.RunTools{Epoch: 1, Calls: c.calls}, time.Minute)
				if _, err := f.Result(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Second) // late results come
				synctest.Wait()
				events := sink.all()
				if c.off && len(events) > 0 {
					t.Fatalf("%d events sent with nobody observing the call: %+v", len(events), events)
				}
				digests := kt.digests()
				var got []settled
				running := 0
				for _, e := range events {
					if e.Kind != messages.EventTool {
						t.Errorf("event of kind %v", e.Kind)
						continue
					}
					if e.Audit == nil {
						if e.Outcome != messages.CallRunning {
							t.Errorf("settled line %s %s without an audit", e.Call, e.Outcome)
						}
						running++
						continue
					}
					a := e.Audit
					s := settled{call: e.Call, page: e.Outcome, outcome: a.Outcome, started: a.Started.Sub(start), at: e.At.Sub(start), args: string(a.Args), result: a.Result}
					switch {
					case a.KeyDigest == "":
					case len(digests) == 1 && a.KeyDigest == digests[0]:
						s.key = true
					default:
						t.Errorf("%s: key digest %q, not the sha256 of the key the tool got (%v)", e.Call, a.KeyDigest, digests)
					}
					got = append(got, s)
				}
				if running != c.running {
					t.Errorf("%d running lines, want %d", running, c.running)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("settled lines\n%+v\nwant\n%+v", got, c.want)
				}
				for _, p := range []*actor.PID{pid, session, llm} {
					if err := sys.Root.StopFuture(p).Wait(); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(sys.Config.DeadLetterThrottleInterval + messages.FrameDuration)
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Errorf("%d goroutines left after the actor stopped", n)
				}
			})
		})
	}
}
