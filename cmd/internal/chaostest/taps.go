package chaostest

import (
	"slices"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// clearLog is the transport's tap: the epoch of every Clear the transport
// was asked to send, in order. The caller's k-th clear is the k-th of
// them, so it knows the epoch below which audio is stale after it (the
// wire's clear carries none).
type clearLog struct {
	mu     sync.Mutex
	epochs []messages.Epoch
}

func (l *clearLog) middleware(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if m, ok := env.Message.(*messages.Clear); ok {
			l.mu.Lock()
			l.epochs = append(l.epochs, m.Epoch)
			l.mu.Unlock()
		}
		next(c, env)
	}
}

func (l *clearLog) clears() []messages.Epoch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.epochs)
}

// panicTap makes a stage panic once, on the n-th message (counted from 1)
// that match accepts: the "panic in a stage" fault. The count lives in
// the call's props, so the restarted stage does not panic again.
type panicTap struct {
	n     int
	match func(any) bool
	seen  int
	fired bool
}

func (p *panicTap) middleware(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if !p.fired && p.match(env.Message) {
			p.seen++
			if p.seen == p.n {
				p.fired = true
				panic("chaostest: injected panic")
			}
		}
		next(c, env)
	}
}

// chain puts a in front of b.
func chain(a, b actor.ReceiverMiddleware) actor.ReceiverMiddleware {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return func(next actor.ReceiverFunc) actor.ReceiverFunc { return a(b(next)) }
}
