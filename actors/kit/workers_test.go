package kit

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/rs/zerolog"
)

// Mutation caught: Close not waiting for the workers (dropping wg.Wait), or
// a worker not stopping on nil, leaves goroutines after Close.
func TestWorkersRunEverythingAndLeaveNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		p := NewWorkers(4)
		var ran atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 100 {
					p.Schedule(func() { ran.Add(1) })
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		if got := ran.Load(); got != 800 {
			t.Errorf("%d runs, want 800", got)
		}
		if s := p.Started(); s < 1 || s > p.Max() {
			t.Errorf("Started() = %d, want 1..%d", s, p.Max())
		}
		p.Close()
		p.Close() // a second Close is a no-op
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after Close", n)
		}
	})
}

// Mutation caught: a Schedule that starts a worker per run instead of
// handing the run to the parked one (or a worker that exits after one run)
// makes Started grow with the runs.
func TestWorkersReuseAParkedWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWorkers(8)
		defer p.Close()
		for range 50 {
			p.Schedule(func() {})
			synctest.Wait() // the worker is parked again
		}
		if s := p.Started(); s != 1 {
			t.Errorf("Started() = %d after 50 runs one at a time, want 1", s)
		}
		if o := p.Overflow(); o != 0 {
			t.Errorf("Overflow() = %d, want 0", o)
		}
	})
}

// A run never waits for a busy worker: with the one worker held by a run
// that blocks, the next run still happens, on a goroutine of its own.
// Mutation caught: queueing the run for a worker (a blocking send on work
// once Max are started) leaves the second run waiting behind the first.
func TestWorkersNeverQueueBehindABusyWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWorkers(1)
		release := make(chan struct{})
		var second atomic.Bool
		p.Schedule(func() { <-release })
		synctest.Wait()
		go p.Schedule(func() { second.Store(true) })
		synctest.Wait()
		if !second.Load() {
			t.Error("the second run waited for the busy worker")
		}
		if o := p.Overflow(); o != 1 {
			t.Errorf("Overflow() = %d, want 1", o)
		}
		close(release)
		p.Close()
	})
}

// Mutation caught: Close returning before a busy worker's run ended (not
// waiting on wg) lets it outlive its owner.
func TestWorkersCloseWaitsForARun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewWorkers(2)
		release := make(chan struct{})
		p.Schedule(func() { <-release })
		synctest.Wait()
		var closed atomic.Bool
		go func() {
			p.Close()
			closed.Store(true)
		}()
		synctest.Wait()
		if closed.Load() {
			t.Fatal("Close returned while a run was going on")
		}
		close(release)
		synctest.Wait()
		if !closed.Load() {
			t.Fatal("Close did not return after the run ended")
		}
		// After Close a run still happens, on a goroutine of its own.
		done := make(chan struct{})
		p.Schedule(func() { close(done) })
		<-done
	})
}

// pingPong bounces n messages between two actors; the last one answers on
// done.
type pingPong struct {
	peer *actor.PID
	done chan int
}

type ball struct{ left int }

func (a *pingPong) Receive(ctx actor.Context) {
	if b, ok := ctx.Message().(*ball); ok {
		if b.left == 0 {
			a.done <- 0
			return
		}
		ctx.Send(a.peer, &ball{left: b.left - 1})
	}
}

var onSystemWorkers = actor.WithDispatcher(SystemWorkers)

// Actors whose props name SystemWorkers run on the system's pool, and a
// whole exchange takes no virtual time: the pool adds no timer, so the
// simulator's exact latency formulas hold on it. Shutdown leaves no
// goroutine, the dead-letter throttle's included.
// Mutations caught: resolve keeping SystemWorkers (Started stays 0); a
// Shutdown that does not close the workers or does not wait out the
// throttle (goroutines left).
func TestSystemWorkersRunTheActors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		sys := NewSystem(zerolog.Nop(), WithWorkers(4))
		if WorkersOf(sys.ActorSystem) != sys.Workers() || sys.Workers() == nil {
			t.Fatal("WorkersOf does not find the system's pool")
		}
		done := make(chan int, 1)
		a, b := &pingPong{done: done}, &pingPong{done: done}
		props := func(p *pingPong) *actor.Props {
			return actor.PropsFromProducer(func() actor.Actor { return p }, actor.WithMailbox(NewMailboxProducer()), onSystemWorkers)
		}
		pa, pb := sys.Root.Spawn(props(a)), sys.Root.Spawn(props(b))
		a.peer, b.peer = pb, pa
		start := time.Now()
		sys.Root.Send(pa, &ball{left: 1000})
		<-done
		if d := time.Since(start); d != 0 {
			t.Errorf("1000 messages took %v of virtual time, want 0", d)
		}
		if s := sys.Workers().Started(); s == 0 {
			t.Error("no worker started: the actors did not run on the pool")
		}
		for _, pid := range []*actor.PID{pa, pb} {
			if err := sys.Root.StopFuture(pid).Wait(); err != nil {
				t.Fatal(err)
			}
		}
		sys.Root.Send(pa, &ball{}) // a dead letter: starts the throttle
		if sys.DeadLetters() == 0 {
			t.Fatal("no dead letter counted")
		}
		sys.Shutdown()
		sys.Shutdown()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after Shutdown", n)
		}
	})
}

// A system without workers runs SystemWorkers actors on a goroutine per
// schedule.
func TestSystemWorkersWithoutAPool(t *testing.T) {
	sys := NewSystem(zerolog.Nop())
	defer sys.Shutdown()
	if sys.Workers() != nil || WorkersOf(sys.ActorSystem) != nil {
		t.Fatal("a system made without WithWorkers has a pool")
	}
	done := make(chan struct{}, 1)
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &counter{done: done} },
		actor.WithMailbox(NewMailboxProducer()), onSystemWorkers))
	sys.Root.Send(pid, &tick{})
	<-done
	if err := sys.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
}

// spawnOnWorkers spawns a counter on a system with workers; the test's
// cleanup stops it and shuts the system down.
func spawnOnWorkers(tb testing.TB) (*System, *actor.PID, chan struct{}) {
	tb.Helper()
	sys := NewSystem(zerolog.Nop(), WithWorkers(0))
	done := make(chan struct{}, 1)
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &counter{done: done} },
		actor.WithMailbox(NewMailboxProducer()), onSystemWorkers))
	tb.Cleanup(func() {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			tb.Errorf("stop: %v", err)
		}
		sys.Shutdown()
	})
	return sys, pid, done
}

// Mutation caught: a Schedule that allocates per run (a closure around fn
// for the handoff) makes this 1 alloc per send.
func TestWorkersSendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	sys, pid, done := spawnOnWorkers(t)
	msg := &tick{}
	for range 10 {
		sys.Root.Send(pid, msg)
		<-done
	}
	allocs := testing.AllocsPerRun(1000, func() {
		sys.Root.Send(pid, msg)
		<-done
	})
	if allocs != 0 {
		t.Errorf("send and run on the workers: %v allocs, want 0", allocs)
	}
}

// BenchmarkWorkersSend is BenchmarkMailboxSend on the system's workers.
func BenchmarkWorkersSend(b *testing.B) {
	sys, pid, done := spawnOnWorkers(b)
	msg := &tick{}
	b.ReportAllocs()
	for b.Loop() {
		sys.Root.Send(pid, msg)
		<-done
	}
}

// A run that ends its goroutine (runtime.Goexit, as t.FailNow does) does
// not cost the pool a worker. Mutation caught: a loop that does not replace
// itself leaves Started counting a dead worker: the next run overflows and
// Close waits forever to hand it its stop.
func TestWorkersSurviveAGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		p := NewWorkers(1)
		p.Schedule(runtime.Goexit)
		synctest.Wait()
		ran := make(chan struct{})
		p.Schedule(func() { close(ran) })
		<-ran
		if s, o := p.Started(), p.Overflow(); s != 1 || o != 0 {
			t.Errorf("after a Goexit: Started() = %d, Overflow() = %d, want 1 and 0", s, o)
		}
		p.Close()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after Close", n)
		}
	})
}
