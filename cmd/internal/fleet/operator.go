package fleet

import (
	"fmt"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/cmd/internal/fleet/operatorpb"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"
)

// operatorName is the name of every node's operator actor: the other
// nodes address it as (member address, operatorName).
const operatorName = "operator"

// node is what the operator actor asks of its node's server.
type node interface {
	Calls() []serve.CallSummary
	Node() serve.NodeInfo
	DescribeCall(id messages.CallID) (serve.CallDetail, error)
	RestartStage(id messages.CallID, stage messages.Stage) error
	HangupCall(id messages.CallID) error
	SetRecordingPaused(id messages.CallID, pause bool) error
	Drain() serve.NodeInfo
	Undrain() (serve.NodeInfo, error)
}

var _ node = (*serve.Server)(nil)

// operator answers the other nodes' operator messages for its node. The
// list is answered in Receive (serve's Calls and Node only read under
// its lock); every command goes to a goroutine of the work group, since
// serve's calls wait for the call's actors (up to 5 s), and that
// goroutine sends the answer. A command that finds the group full is
// refused at once, so Receive never waits.
type operator struct {
	node node
	work *work
	log  zerolog.Logger
}

func newOperator(n node, w *work, log zerolog.Logger) actor.Producer {
	return func() actor.Actor { return &operator{node: n, work: w, log: log} }
}

// Receive implements actor.Actor.
func (o *operator) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *operatorpb.ListCalls:
		ctx.Respond(callListPB(o.node.Node(), o.node.Calls()))
	case *operatorpb.DescribeCall, *operatorpb.RestartStage, *operatorpb.HangupCall, *operatorpb.PauseRecording, *operatorpb.DrainNode, *operatorpb.UndrainNode:
		to := ctx.Sender()
		if to == nil {
			// Sent, not requested: nobody waits for the answer, and a
			// command nobody confirms is not carried out.
			o.log.Warn().Str("message", fmt.Sprintf("%T", m)).Msg("fleet: an operator command came without a sender; ignored")
			return
		}
		root := ctx.ActorSystem().Root
		msg := m.(proto.Message)
		if !o.work.Go(func() { root.Send(to, o.answer(msg)) }) {
			ctx.Respond(&operatorpb.Error{Code: operatorpb.Code_CODE_REFUSED, Text: fmt.Sprintf("the node is busy: %d operator commands in flight", o.work.Cap())})
		}
	}
}

// answer carries out one command on the node (on a work goroutine).
func (o *operator) answer(m proto.Message) proto.Message {
	switch m := m.(type) {
	case *operatorpb.DescribeCall:
		d, err := o.node.DescribeCall(messages.CallID(m.GetCall()))
		if err != nil {
			return errorPB(err)
		}
		return detailPB(d)
	case *operatorpb.RestartStage:
		if err := o.node.RestartStage(messages.CallID(m.GetCall()), messages.Stage(m.GetStage())); err != nil {
			return errorPB(err)
		}
		return &operatorpb.Restarted{Call: m.GetCall(), Stage: m.GetStage()}
	case *operatorpb.HangupCall:
		if err := o.node.HangupCall(messages.CallID(m.GetCall())); err != nil {
			return errorPB(err)
		}
		return &operatorpb.HangupAccepted{Call: m.GetCall()}
	case *operatorpb.PauseRecording:
		if err := o.node.SetRecordingPaused(messages.CallID(m.GetCall()), m.GetPause()); err != nil {
			return errorPB(err)
		}
		return &operatorpb.RecordingPaused{Call: m.GetCall(), Paused: m.GetPause()}
	case *operatorpb.DrainNode:
		if err := o.isNamed(m.GetNode()); err != nil {
			return errorPB(err)
		}
		return nodePB(o.node.Drain())
	case *operatorpb.UndrainNode:
		if err := o.isNamed(m.GetNode()); err != nil {
			return errorPB(err)
		}
		n, err := o.node.Undrain()
		if err != nil {
			return errorPB(err)
		}
		return nodePB(n)
	}
	return &operatorpb.Error{Code: operatorpb.Code_CODE_INTERNAL, Text: fmt.Sprintf("no command %T", m)}
}

// isNamed checks a node command reached the node it names (an address
// another node took over answers unknown_node, not a drain of itself).
func (o *operator) isNamed(name string) error {
	if self := o.node.Node().Node; name != self {
		return fmt.Errorf("%w: %q (this node is %q)", serve.ErrUnknownNode, name, self)
	}
	return nil
}

// work runs at most cap functions at once, each on a goroutine of its
// own, and waits for them at Wait.
type work struct {
	slots chan struct{}
	wg    sync.WaitGroup
}

func newWork(n int) *work { return &work{slots: make(chan struct{}, n)} }

// Go runs f on a goroutine, or returns false at once when cap already run.
func (w *work) Go(f func()) bool {
	select {
	case w.slots <- struct{}{}:
	default:
		return false
	}
	w.wg.Go(func() {
		defer func() { <-w.slots }()
		f()
	})
	return true
}

// Cap is how many run at most.
func (w *work) Cap() int { return cap(w.slots) }

// Wait waits for every function Go started. Call it once no Go can come.
func (w *work) Wait() { w.wg.Wait() }
