package kit

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// Peers are the addresses of one call's actors. The session computes them
// from its own id before it spawns a child (a child's id is the session's id,
// a slash and the stage name), so every producer can capture them, and a
// restarted actor keeps talking to the same addresses.
type Peers struct {
	Call      messages.CallID
	Session   *actor.PID
	Transport *actor.PID
	VAD       *actor.PID
	STT       *actor.PID
	Turn      *actor.PID
	LLM       *actor.PID
	Tools     *actor.PID
	TTS       *actor.PID
	Pacer     *actor.PID
	// Events tells the stages that someone observes the call's live
	// events (session.Config.OnEvent); without it Event sends nothing.
	Events bool
}

// NewPeers derives the stage addresses under session.
func NewPeers(call messages.CallID, session *actor.PID) Peers {
	at := func(s messages.Stage) *actor.PID { return actor.NewPID(session.Address, session.Id+"/"+string(s)) }
	return Peers{
		Call: call, Session: session,
		Transport: at(messages.StageTransport), VAD: at(messages.StageVAD), STT: at(messages.StageSTT),
		Turn: at(messages.StageTurn), LLM: at(messages.StageLLM), Tools: at(messages.StageTools),
		TTS: at(messages.StageTTS), Pacer: at(messages.StagePacer),
	}
}

// Of returns the address of stage s, or nil for an unknown stage.
func (p Peers) Of(s messages.Stage) *actor.PID {
	switch s {
	case messages.StageTransport:
		return p.Transport
	case messages.StageVAD:
		return p.VAD
	case messages.StageSTT:
		return p.STT
	case messages.StageTurn:
		return p.Turn
	case messages.StageLLM:
		return p.LLM
	case messages.StageTools:
		return p.Tools
	case messages.StageTTS:
		return p.TTS
	case messages.StagePacer:
		return p.Pacer
	}
	return nil
}

// Mark sends a timeline mark to the session.
func (p Peers) Mark(s actor.SenderContext, e messages.Epoch, k messages.MarkKind, at time.Time) {
	s.Send(p.Session, &messages.TurnMark{Epoch: e, Kind: k, At: at})
}

// Event sends a live call event to the session when the call is observed.
func (p Peers) Event(s actor.SenderContext, ev *messages.CallEvent) {
	if p.Events {
		s.Send(p.Session, ev)
	}
}
