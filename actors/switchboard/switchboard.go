package switchboard

import (
	"errors"
	"fmt"
	"sort"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
)

// Errors of the switchboard.
var (
	// ErrDuplicate: a call with this id is live.
	ErrDuplicate = errors.New("switchboard: call id in use")
	// ErrUnknownCall: no live call has this id.
	ErrUnknownCall = errors.New("switchboard: unknown call")
)

// StartCall admits a call; the answer is a *CallStarted.
type StartCall struct {
	Call  messages.CallID
	Props *actor.Props
}

// CallStarted answers StartCall.
type CallStarted struct {
	Call messages.CallID
	PID  *actor.PID
	Err  error
}

// ToCall routes Msg (Describe, Restart or Hangup) to a call's session; the
// session answers the original asker. An unknown call is answered with a
// *CallStarted carrying ErrUnknownCall.
type ToCall struct {
	Call messages.CallID
	Msg  any
}

// Actor is the switchboard.
//
// It does not admit: the server reserves a slot per call before the call
// reaches it (one owner of admission), and the switchboard spawns and
// routes what it is given.
type Actor struct {
	calls map[messages.CallID]*actor.PID
	stats kit.Counters
}

// Props makes the switchboard's props.
func Props() *actor.Props {
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{calls: map[messages.CallID]*actor.PID{}, stats: stats}
	}, actor.WithMailbox(kit.NewMailboxProducer()), actor.WithDispatcher(kit.SystemWorkers),
		// A session that panics outside its stages is stopped, never
		// restarted with half of a call's state.
		actor.WithSupervisor(actor.NewOneForOneStrategy(0, 0, func(any) actor.Directive { return actor.StopDirective })))
}

// Receive handles the switchboard's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *StartCall:
		ctx.Respond(a.start(ctx, m))
	case *messages.ListCalls:
		out := &messages.CallList{Calls: make([]messages.CallID, 0, len(a.calls))}
		for id := range a.calls {
			out.Calls = append(out.Calls, id)
		}
		sort.Slice(out.Calls, func(i, j int) bool { return out.Calls[i] < out.Calls[j] })
		ctx.Respond(out)
	case *ToCall:
		pid, ok := a.calls[m.Call]
		if !ok {
			ctx.Respond(&CallStarted{Call: m.Call, Err: fmt.Errorf("%w: %s", ErrUnknownCall, m.Call)})
			return
		}
		ctx.RequestWithCustomSender(pid, m.Msg, ctx.Sender())
	case *actor.Terminated:
		for id, pid := range a.calls {
			if pid.Equal(m.Who) {
				delete(a.calls, id)
				a.stats.Inc("ended")
			}
		}
	case *messages.Describe:
		d := kit.Describe("switchboard", "serving", a.stats)
		d.Counters["live_calls"] = uint64(len(a.calls))
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) start(ctx actor.Context, m *StartCall) *CallStarted {
	if _, ok := a.calls[m.Call]; ok {
		a.stats.Inc("refused_duplicate")
		return &CallStarted{Call: m.Call, Err: fmt.Errorf("%w: %s", ErrDuplicate, m.Call)}
	}
	pid, err := ctx.SpawnNamed(m.Props, string(m.Call))
	if err != nil {
		return &CallStarted{Call: m.Call, Err: fmt.Errorf("switchboard: spawn %s: %w", m.Call, err)}
	}
	a.calls[m.Call] = pid
	a.stats.Inc("admitted")
	return &CallStarted{Call: m.Call, PID: pid}
}
