package tools

import (
	"context"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// callActor runs one SideEffect call to its end and reports to its parent,
// then stops. Only the end of the call (hang-up) cancels it.
type callActor struct {
	reg    *agent.Registry
	call   messages.ToolCall
	info   agent.CallInfo
	done   *messages.ToolDone
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ actor.Actor = (*callActor)(nil)

type callFinished struct{}

func callProps(reg *agent.Registry, call messages.ToolCall, info agent.CallInfo, done *messages.ToolDone) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &callActor{reg: reg, call: call, info: info, done: done}
	})
}

func (c *callActor) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		if c.cancel != nil {
			return
		}
		cctx, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		self, root := ctx.Self(), ctx.ActorSystem().Root
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.done.Result = runAdmitted(cctx, c.reg, c.call, c.info) // admitted by the tools actor
			root.Send(self, &callFinished{})
		}()
	case *callFinished:
		ctx.Send(ctx.Parent(), c.done)
		ctx.Stop(ctx.Self())
	case *actor.Stopping:
		if c.cancel != nil {
			c.cancel()
			c.wg.Wait()
		}
	}
}
