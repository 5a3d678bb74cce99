package kit

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// DefaultMailboxSize is the starting capacity of a mailbox: 16 messages.
// A mailbox grows by doubling when a burst needs it and keeps that size,
// so a call pays only for the bursts it has.
const DefaultMailboxSize = 16

// MaxMailboxSize caps a mailbox: 4096 messages (80 s of audio frames).
// Past it the oldest user message is dropped and counted; a stage that far
// behind has failed anyway, and an unbounded queue would take the process.
const MaxMailboxSize = 4096

// throughput is how many messages a mailbox runs before it yields.
const throughput = 300

// Mailbox is a protoactor mailbox that posts and runs a pointer message
// without a heap allocation: its queue is a ring that grows by doubling up to
// MaxMailboxSize (so steady traffic reuses its slots), and the function the
// dispatcher runs is bound once, not per schedule (protoactor's default
// mailbox allocates a method value every time it schedules itself).
//
// System messages (start, stop, restart, failure) go to their own queue and
// always run first; they are rare, so that queue is a plain slice whose
// first slots live in the mailbox.
//
// Its props' dispatcher SystemWorkers stands for the Workers of the actor's
// System (see SystemWorkers).
type Mailbox struct {
	mu      sync.Mutex
	ring    []any
	head, n int
	// system is the system queue from sysHead on; it starts on sysBuf and
	// is emptied in place, so the start, stop and terminate messages of a
	// life cost no allocation.
	system    []any
	sysHead   int
	sysBuf    [4]any
	suspended bool
	// ringBuf is the ring's first DefaultMailboxSize slots, in the
	// mailbox's own allocation.
	ringBuf [DefaultMailboxSize]any

	scheduled atomic.Bool
	userCount atomic.Int32
	sysCount  atomic.Int32
	dropped   atomic.Uint64

	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	run        func()
}

var _ actor.Mailbox = (*Mailbox)(nil)

// NewMailbox makes an empty mailbox.
func NewMailbox() *Mailbox {
	m := &Mailbox{}
	m.ring, m.system = m.ringBuf[:], m.sysBuf[:0]
	m.run = m.process
	return m
}

// NewMailboxProducer returns a producer for actor.WithMailbox.
func NewMailboxProducer() actor.MailboxProducer {
	return func() actor.Mailbox { return NewMailbox() }
}

// MailboxRef keeps the mailbox of one spawned actor so that its parent can
// report the depth (protoactor does not expose a process's mailbox).
type MailboxRef struct {
	mb atomic.Pointer[Mailbox]
}

// Producer returns the producer for actor.WithMailbox; the mailbox it makes
// is kept in r.
func (r *MailboxRef) Producer() actor.MailboxProducer {
	return func() actor.Mailbox {
		m := NewMailbox()
		r.mb.Store(m)
		return m
	}
}

// Depth is the number of queued user messages, 0 before the spawn.
func (r *MailboxRef) Depth() int {
	if m := r.mb.Load(); m != nil {
		return m.UserMessageCount()
	}
	return 0
}

// Dropped is the number of messages the mailbox dropped when full.
func (r *MailboxRef) Dropped() uint64 {
	if m := r.mb.Load(); m != nil {
		return m.Dropped()
	}
	return 0
}

// PostUserMessage queues a message for the actor.
func (m *Mailbox) PostUserMessage(msg any) {
	m.mu.Lock()
	if m.n == len(m.ring) {
		if len(m.ring) < MaxMailboxSize {
			m.growLocked()
		} else {
			m.ring[m.head] = nil
			m.head = (m.head + 1) & (len(m.ring) - 1)
			m.n--
			m.userCount.Add(-1)
			m.dropped.Add(1)
		}
	}
	m.ring[(m.head+m.n)&(len(m.ring)-1)] = msg
	m.n++
	m.mu.Unlock()
	m.userCount.Add(1)
	m.schedule()
}

func (m *Mailbox) growLocked() {
	next := make([]any, len(m.ring)*2)
	for i := 0; i < m.n; i++ {
		next[i] = m.ring[(m.head+i)&(len(m.ring)-1)]
	}
	clear(m.ring) // ringBuf stays with the mailbox: let go of the messages
	m.ring, m.head = next, 0
}

// PostSystemMessage queues a lifecycle message; it runs before user messages.
func (m *Mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.system = append(m.system, msg)
	m.mu.Unlock()
	m.sysCount.Add(1)
	m.schedule()
}

// RegisterHandlers binds the mailbox to its actor, and SystemWorkers to the
// workers of the actor's system.
func (m *Mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, resolve(dispatcher, invoker)
}

// Start is called once when the actor is spawned.
func (m *Mailbox) Start() {}

// UserMessageCount is the number of queued user messages (the mailbox depth
// operators see).
func (m *Mailbox) UserMessageCount() int { return int(m.userCount.Load()) }

// Dropped counts user messages dropped because the mailbox was full.
func (m *Mailbox) Dropped() uint64 { return m.dropped.Load() }

func (m *Mailbox) schedule() {
	if m.scheduled.CompareAndSwap(false, true) {
		m.dispatcher.Schedule(m.run)
	}
}

func (m *Mailbox) process() {
	for {
		m.drain()
		m.scheduled.Store(false)
		m.mu.Lock()
		more := m.sysHead < len(m.system) || (!m.suspended && m.n > 0)
		m.mu.Unlock()
		if !more || !m.scheduled.CompareAndSwap(false, true) {
			return
		}
	}
}

// drain runs messages until both queues are empty or the actor is
// suspended. A panic in the actor is handed to its supervisor, as
// protoactor's own mailbox does.
func (m *Mailbox) drain() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	for i := 0; ; i++ {
		if i == throughput {
			i = 0
			runtime.Gosched()
		}
		m.mu.Lock()
		if m.sysHead < len(m.system) {
			msg = m.system[m.sysHead]
			m.system[m.sysHead] = nil
			m.sysHead++
			if m.sysHead == len(m.system) {
				m.system, m.sysHead = m.system[:0], 0
			}
			m.mu.Unlock()
			m.sysCount.Add(-1)
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.mu.Lock()
				m.suspended = true
				m.mu.Unlock()
			case *actor.ResumeMailbox:
				m.mu.Lock()
				m.suspended = false
				m.mu.Unlock()
			default:
				m.invoker.InvokeSystemMessage(msg)
			}
			continue
		}
		if m.suspended || m.n == 0 {
			m.mu.Unlock()
			return
		}
		msg = m.ring[m.head]
		m.ring[m.head] = nil
		m.head = (m.head + 1) & (len(m.ring) - 1)
		m.n--
		m.mu.Unlock()
		m.userCount.Add(-1)
		m.invoker.InvokeUserMessage(msg)
	}
}
