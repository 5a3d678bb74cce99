package sim

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// Mutation breaks the engine or its client in one way, so a test can show
// that the suite's checks notice: each suite check is known to fail for
// the fault it is there for.
type Mutation struct {
	Name  string
	Apply func(c *Call)
}

// configure chains a session config change after the call's own.
func configure(c *Call, f func(*session.Config)) {
	prev := c.Configure
	c.Configure = func(cfg *session.Config) {
		if prev != nil {
			prev(cfg)
		}
		f(cfg)
	}
}

// Mutations lists the faults of the suite's own tests.
func Mutations() []Mutation {
	return []Mutation{
		{Name: "end_of_turn_plus_100ms", Apply: func(c *Call) {
			configure(c, func(cfg *session.Config) { cfg.Turn.EndOfTurnDelay = 100 * msec })
		}},
		{Name: "barge_in_confirmation_plus_20ms", Apply: func(c *Call) {
			configure(c, func(cfg *session.Config) { cfg.Turn.BargeInDelay = 20 * msec })
		}},
		{Name: "barge_in_confirmation_plus_40ms", Apply: func(c *Call) {
			configure(c, func(cfg *session.Config) { cfg.Turn.BargeInDelay = 40 * msec })
		}},
		{Name: "dropped_interrupt_at_output", Apply: func(c *Call) {
			c.WrapConn = func(l *Loopback) conn.Conn { return &brokenConn{Loopback: l, dropClear: true} }
		}},
		{Name: "old_turn_audio_after_interrupt", Apply: func(c *Call) {
			c.WrapConn = func(l *Loopback) conn.Conn { return &brokenConn{Loopback: l, staleAfterClear: true} }
		}},
		{Name: "unheard_word_kept", Apply: func(c *Call) {
			configure(c, func(cfg *session.Config) {
				cfg.Taps = map[messages.Stage]actor.ReceiverMiddleware{messages.StageLLM: heardOneMore}
			})
		}},
		{Name: "slow_transport_consumer_30ms", Apply: func(c *Call) { c.Loopback.ReadDelay = 30 * msec }},
		{Name: "slow_transport_consumer_150ms", Apply: func(c *Call) { c.Loopback.ReadDelay = 150 * msec }},
	}
}

// brokenConn misbehaves at the output in one of two ways.
type brokenConn struct {
	*Loopback
	dropClear       bool
	staleAfterClear bool
}

// Clear either never reaches the client, or is followed by a frame of
// the old epoch.
func (b *brokenConn) Clear(e messages.Epoch) error {
	if b.dropClear {
		return nil
	}
	if err := b.Loopback.Clear(e); err != nil {
		return err
	}
	if b.staleAfterClear && e > 1 {
		return b.Loopback.WriteFrame(&messages.OutputAudio{Epoch: e - 1, Rate: b.Loopback.OutputRate()})
	}
	return nil
}

// heardOneMore makes the llm keep one more word than the pacer says was
// heard at a cut.
func heardOneMore(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if h, ok := env.Message.(*messages.Heard); ok && h.Cut {
			more := *h
			more.Words++
			env = actor.WrapEnvelope(&more)
		}
		next(c, env)
	}
}
