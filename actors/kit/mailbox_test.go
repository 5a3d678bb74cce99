package kit

import (
	"fmt"
	"slices"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// recorder is a fake actor.MessageInvoker: it logs what it is given, and
// runs onUser (when set) for each user message, inside the mailbox's run.
type recorder struct {
	got       []any
	escalated []escalation
	onUser    func(msg any)
}

type escalation struct {
	reason, msg any
}

var _ actor.MessageInvoker = (*recorder)(nil)

func (r *recorder) InvokeSystemMessage(msg any) { r.got = append(r.got, fmt.Sprint("sys:", msg)) }

func (r *recorder) InvokeUserMessage(msg any) {
	r.got = append(r.got, msg)
	if r.onUser != nil {
		r.onUser(msg)
	}
}

func (r *recorder) EscalateFailure(reason, msg any) {
	r.escalated = append(r.escalated, escalation{reason: reason, msg: msg})
}

// newSyncMailbox binds a mailbox to r on a dispatcher that runs it inline,
// so every post has been handled when it returns.
func newSyncMailbox(r *recorder) *Mailbox {
	m := NewMailbox()
	m.RegisterHandlers(r, actor.NewSynchronizedDispatcher(throughput))
	m.Start()
	return m
}

func ints(from, to int) []any {
	out := make([]any, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestMailboxOrder(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, m *Mailbox, r *recorder)
		want []any
	}{
		{
			name: "user messages in post order",
			run: func(t *testing.T, m *Mailbox, _ *recorder) {
				for _, v := range ints(0, 5) {
					m.PostUserMessage(v)
				}
			},
			want: ints(0, 5),
		},
		{
			// Mutation caught: drain taking a user message before the system
			// queue (swap the two branches) puts "sys:stop" after 1 and 2.
			name: "system messages queued during a run go before queued user messages",
			run: func(t *testing.T, m *Mailbox, r *recorder) {
				r.onUser = func(msg any) {
					if msg == "trigger" {
						m.PostUserMessage(1)
						m.PostUserMessage(2)
						m.PostSystemMessage("stop")
					}
				}
				m.PostUserMessage("trigger")
			},
			want: []any{"trigger", "sys:stop", 1, 2},
		},
		{
			// Mutation caught: ignoring m.suspended in drain runs 1, 2, 3 at
			// once, before "sys:ping".
			name: "suspend holds user messages until resume, system messages still run",
			run: func(t *testing.T, m *Mailbox, _ *recorder) {
				m.PostSystemMessage(&actor.SuspendMailbox{})
				m.PostUserMessage(1)
				m.PostUserMessage(2)
				m.PostUserMessage(3)
				if got := m.UserMessageCount(); got != 3 {
					t.Errorf("UserMessageCount = %d while suspended, want 3", got)
				}
				m.PostSystemMessage("ping")
				m.PostSystemMessage(&actor.ResumeMailbox{})
			},
			want: []any{"sys:ping", 1, 2, 3},
		},
		{
			// Mutation caught: growLocked copying from index 0 instead of
			// from head scrambles the order once the ring grows.
			name: "growth past DefaultMailboxSize keeps order",
			run: func(t *testing.T, m *Mailbox, _ *recorder) {
				m.PostSystemMessage(&actor.SuspendMailbox{})
				// Wrap the ring first so that growth must unroll it.
				for _, v := range ints(-10, 0) {
					m.PostUserMessage(v)
				}
				m.PostSystemMessage(&actor.ResumeMailbox{})
				m.PostSystemMessage(&actor.SuspendMailbox{})
				for _, v := range ints(0, 3*DefaultMailboxSize+5) {
					m.PostUserMessage(v)
				}
				m.PostSystemMessage(&actor.ResumeMailbox{})
			},
			want: append(ints(-10, 0), ints(0, 3*DefaultMailboxSize+5)...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			m := newSyncMailbox(r)
			tt.run(t, m, r)
			if !slices.Equal(r.got, tt.want) {
				t.Errorf("invoked %v\nwant    %v", r.got, tt.want)
			}
			if n := m.UserMessageCount(); n != 0 {
				t.Errorf("UserMessageCount = %d after the run, want 0", n)
			}
		})
	}
}

// Mutation caught: dropping the newest message instead of the oldest (or
// not counting the drop) when the ring is at MaxMailboxSize.
func TestMailboxFullDropsOldest(t *testing.T) {
	const extra = 3
	r := &recorder{}
	m := newSyncMailbox(r)
	m.PostSystemMessage(&actor.SuspendMailbox{})
	for _, v := range ints(0, MaxMailboxSize+extra) {
		m.PostUserMessage(v)
	}
	if got := m.Dropped(); got != extra {
		t.Errorf("Dropped() = %d, want %d", got, extra)
	}
	if got := m.UserMessageCount(); got != MaxMailboxSize {
		t.Errorf("UserMessageCount() = %d, want %d", got, MaxMailboxSize)
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	if want := ints(extra, MaxMailboxSize+extra); !slices.Equal(r.got, want) {
		t.Errorf("invoked %d messages starting %v, want %d starting %v", len(r.got), r.got[:min(3, len(r.got))], len(want), want[:3])
	}
	if got := m.UserMessageCount(); got != 0 {
		t.Errorf("UserMessageCount() = %d after resume, want 0", got)
	}
}

// Mutation caught: drain without its recover (the panic takes the
// dispatcher goroutine) or escalating without the failing message.
func TestMailboxPanicEscalates(t *testing.T) {
	tests := []struct {
		name    string
		payload any
		reason  any
	}{
		{name: "string panic", payload: "boom", reason: "bad state"},
		{name: "error panic", payload: 42, reason: fmt.Errorf("broken")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{}
			r.onUser = func(msg any) {
				if msg == tt.payload {
					panic(tt.reason)
				}
			}
			m := newSyncMailbox(r)
			m.PostUserMessage(tt.payload)
			if len(r.escalated) != 1 {
				t.Fatalf("EscalateFailure called %d times, want 1", len(r.escalated))
			}
			if e := r.escalated[0]; e.reason != tt.reason || e.msg != tt.payload {
				t.Errorf("EscalateFailure(%v, %v), want (%v, %v)", e.reason, e.msg, tt.reason, tt.payload)
			}
			// The mailbox is not wedged: the next message runs.
			m.PostUserMessage("after")
			if want := []any{tt.payload, "after"}; !slices.Equal(r.got, want) {
				t.Errorf("invoked %v, want %v", r.got, want)
			}
		})
	}
}

type tick struct{}

// counter counts ticks and signals each on a one-slot channel.
type counter struct {
	n    int
	done chan struct{}
}

func (c *counter) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*tick); ok {
		c.n++
		c.done <- struct{}{}
	}
}

// spawnCounter spawns a counter actor on mailbox and stops it at the end of
// the test.
func spawnCounter(tb testing.TB, mailbox actor.MailboxProducer) (*System, *actor.PID, chan struct{}) {
	tb.Helper()
	sys := NewSystem(zerolog.Nop())
	done := make(chan struct{}, 1)
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &counter{done: done} }, actor.WithMailbox(mailbox)))
	tb.Cleanup(func() {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			tb.Errorf("stop: %v", err)
		}
	})
	return sys, pid, done
}

// Mutation caught: schedule passing the method value m.process (allocated on
// every schedule) instead of the bound m.run makes this 1 alloc per send.
func TestMailboxSendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	sys, pid, done := spawnCounter(t, NewMailboxProducer())
	msg := &tick{}
	// Warm up: the first messages grow internal state once.
	for range 10 {
		sys.Root.Send(pid, msg)
		<-done
	}
	allocs := testing.AllocsPerRun(1000, func() {
		sys.Root.Send(pid, msg)
		<-done
	})
	if allocs != 0 {
		t.Errorf("send and run of a preallocated message: %v allocs, want 0", allocs)
	}
}

func benchmarkSend(b *testing.B, mailbox actor.MailboxProducer) {
	sys, pid, done := spawnCounter(b, mailbox)
	msg := &tick{}
	b.ReportAllocs()
	for b.Loop() {
		sys.Root.Send(pid, msg)
		<-done
	}
}

func BenchmarkMailboxSend(b *testing.B) { benchmarkSend(b, NewMailboxProducer()) }

// BenchmarkProtoactorBoundedSend is protoactor's own bounded mailbox, for
// comparison with BenchmarkMailboxSend.
func BenchmarkProtoactorBoundedSend(b *testing.B) { benchmarkSend(b, actor.Bounded(1024)) }

// A life's system messages (started, stop, terminated, ...) reuse the
// mailbox's own slots. Mutation caught: emptying the system queue with a
// fresh slice (m.system[:0:0]) makes each post allocate again.
func TestMailboxSystemMessagesAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	inv := &countingInvoker{}
	m := NewMailbox()
	m.RegisterHandlers(inv, actor.NewSynchronizedDispatcher(throughput))
	stop, started := &actor.Stop{}, &actor.Started{}
	allocs := testing.AllocsPerRun(100, func() {
		m.PostSystemMessage(&actor.SuspendMailbox{})
		m.PostSystemMessage(stop)
		m.PostSystemMessage(started)
		m.PostSystemMessage(&actor.ResumeMailbox{})
	})
	if inv.system != 2*101 {
		t.Errorf("%d system messages invoked, want %d", inv.system, 2*101)
	}
	// SuspendMailbox and ResumeMailbox are empty structs: no allocation.
	if allocs != 0 {
		t.Errorf("four system messages: %v allocs, want 0", allocs)
	}
}

// countingInvoker counts what it is given, without allocating.
type countingInvoker struct{ system, user int }

func (c *countingInvoker) InvokeSystemMessage(any)  { c.system++ }
func (c *countingInvoker) InvokeUserMessage(any)    { c.user++ }
func (c *countingInvoker) EscalateFailure(any, any) {}

// Mutation caught: growLocked without clear(m.ring) leaves the first
// messages referenced from the mailbox's inline slots for its whole life.
func TestMailboxGrowthLetsGoOfTheInlineSlots(t *testing.T) {
	r := &recorder{}
	m := newSyncMailbox(r)
	m.PostSystemMessage(&actor.SuspendMailbox{})
	for _, v := range ints(0, DefaultMailboxSize+1) {
		m.PostUserMessage(v)
	}
	for i, v := range m.ringBuf {
		if v != nil {
			t.Fatalf("inline slot %d still holds %v after the ring grew", i, v)
		}
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	if got := len(r.got); got != DefaultMailboxSize+1 {
		t.Errorf("%d messages run, want %d", got, DefaultMailboxSize+1)
	}
}
