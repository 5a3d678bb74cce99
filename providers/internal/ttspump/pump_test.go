package ttspump

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// newPump makes a pump over a lock of its own (a session's stand-in).
func newPump(buffer int) (*Pump, *sync.Mutex) {
	mu := &sync.Mutex{}
	return New(mu, buffer), mu
}

func audio(ctx string, n int) providers.TTSEvent {
	return providers.TTSEvent{Kind: providers.TTSAudio, ContextID: ctx, Offset: time.Duration(n)}
}

// short names an event for a failure message.
func short(ev providers.TTSEvent) string {
	return fmt.Sprintf("%s/%d/%d", ev.ContextID, ev.Kind, ev.Offset)
}

// drain pops what is queued.
func drain(p *Pump) []string {
	var got []string
	for {
		ev, ok := p.PopLocked()
		if !ok {
			return got
		}
		got = append(got, short(ev))
	}
}

// Mutation caught: the compaction in PopLocked removed (a queue never
// empty, a long answer read a little behind the service, grows its array
// for good: 100010 slots here).
func TestQueueStaysSmall(t *testing.T) {
	p, _ := newPump(0)
	for range 10 {
		p.QueueLocked(providers.TTSEvent{Kind: providers.TTSAudio})
	}
	for i := range 100000 {
		p.QueueLocked(providers.TTSEvent{Kind: providers.TTSWord, Offset: time.Duration(i)})
		if ev, ok := p.PopLocked(); !ok || (i >= 10 && ev.Offset != time.Duration(i-10)) {
			t.Fatalf("pop %d: %+v %v", i, ev, ok)
		}
	}
	if c := p.CapLocked(); c > 512 {
		t.Errorf("queue array of %d for 11 live events", c)
	}
	if n := p.PendingLocked(); n != 10 {
		t.Errorf("%d pending, want 10", n)
	}
}

// Mutations caught: the Cancelled ack taken back with the context's other
// events ("ack kept": the caller would never see its ack); the scan
// started at 0 rather than at the head ("after a pop": the slot already
// handed over is kept, so the next pop returns the wrong event); the
// count not what was taken (Stats' Retracted); another context's events
// taken ("other contexts kept").
func TestRetractLocked(t *testing.T) {
	cancelled := providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: "a"}
	flushed := providers.TTSEvent{Kind: providers.TTSFlushed, ContextID: "a"}
	for _, tc := range []struct {
		name   string
		queued []providers.TTSEvent
		popped int // taken before the retract
		want   []string
		n      int
	}{
		{
			name:   "other contexts kept",
			queued: []providers.TTSEvent{audio("a", 1), audio("b", 2), audio("a", 3), flushed, audio("c", 4)},
			want:   []string{"b/1/2", "c/1/4"},
			n:      3,
		},
		{
			name:   "ack kept",
			queued: []providers.TTSEvent{audio("a", 1), cancelled, audio("a", 2)},
			want:   []string{short(cancelled)},
			n:      2,
		},
		{
			name:   "after a pop",
			queued: []providers.TTSEvent{audio("b", 1), audio("a", 2), audio("b", 3), audio("a", 4), audio("b", 5)},
			popped: 1,
			want:   []string{"b/1/3", "b/1/5"},
			n:      2,
		},
		{
			name:   "nothing of the context",
			queued: []providers.TTSEvent{audio("b", 1), audio("c", 2)},
			want:   []string{"b/1/1", "c/1/2"},
		},
		{name: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPump(0)
			for _, ev := range tc.queued {
				p.QueueLocked(ev)
			}
			for range tc.popped {
				p.PopLocked()
			}
			if n := p.RetractLocked("a"); n != tc.n {
				t.Errorf("took back %d, want %d", n, tc.n)
			}
			if n := p.PendingLocked(); n != len(tc.want) {
				t.Errorf("%d pending, want %d", n, len(tc.want))
			}
			if got := drain(p); !slices.Equal(got, tc.want) {
				t.Errorf("left %q, want %q", got, tc.want)
			}
		})
	}
}

// read takes what Events delivers until it closes, failing the test if
// it stays open a minute (virtual time).
func read(t *testing.T, p *Pump) []providers.TTSEvent {
	t.Helper()
	var got []providers.TTSEvent
	for {
		select {
		case ev, ok := <-p.Events():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-time.After(time.Minute):
			t.Fatalf("Events still open after %d events", len(got))
			return got
		}
	}
}

// Mutations caught: the failure not delivered before Events closes (the
// caller would take a failed session for a closed one); an event queued
// after the goroutine went to sleep not waking it (QueueLocked not
// signalling); events out of order.
func TestDeliversInOrderThenTheFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, mu := newPump(1)
		p.Start()
		synctest.Wait() // asleep on an empty queue
		fail := &providers.Protocol{Detail: "test"}
		mu.Lock()
		for i := range 3 {
			p.QueueLocked(audio("a", i))
		}
		mu.Unlock()
		var got []providers.TTSEvent
		for range 3 {
			select {
			case ev := <-p.Events():
				got = append(got, ev)
			case <-time.After(time.Minute):
				t.Fatalf("%d events delivered of 3 queued", len(got))
			}
		}
		mu.Lock()
		p.QueueLocked(audio("a", 3))
		p.EndLocked(fail)
		mu.Unlock()
		got = append(got, read(t, p)...)
		p.Wait()
		var names []string
		for _, ev := range got {
			names = append(names, short(ev))
		}
		want := []string{"a/1/0", "a/1/1", "a/1/2", "a/1/3", short(providers.TTSEvent{Kind: providers.TTSError})}
		if !slices.Equal(names, want) {
			t.Fatalf("delivered %q, want %q", names, want)
		}
		if err := got[4].Err; !errors.Is(err, fail) {
			t.Errorf("failure %v, want %v", err, fail)
		}
	})
}

// Mutations caught: an end without failure (Close, the session's context)
// that does not stop the goroutine (it stays blocked on an Events channel
// nobody reads: Wait hangs and the bubble reports the deadlock), that
// delivers what was pending, or that reports the cancellation as a
// failure; a wrapped context error told apart with == rather than
// errors.Is.
func TestAnEndWithoutFailureDropsWhatIsPending(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"closed", nil},
		{"context cancelled", context.Canceled},
		{"context deadline, wrapped", fmt.Errorf("dial: %w", context.DeadlineExceeded)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, mu := newPump(0)
				p.Start()
				mu.Lock()
				for i := range 5 {
					p.QueueLocked(audio("a", i))
				}
				mu.Unlock()
				synctest.Wait() // the goroutine holds the first, nobody reads
				mu.Lock()
				p.EndLocked(tc.err)
				if !p.EndedLocked() || p.PendingLocked() != 0 {
					t.Errorf("ended %v, %d pending; want ended, none", p.EndedLocked(), p.PendingLocked())
				}
				mu.Unlock()
				p.Wait()
				if got := read(t, p); len(got) != 0 {
					t.Errorf("delivered %d events after the end, first %+v", len(got), got[0])
				}
			})
		})
	}
}

// Mutation caught: Stop not heard while the goroutine waits to hand an
// event over (a Close with nobody reading Events would hang; the bubble
// reports the deadlock), or while it sleeps on an empty queue.
func TestStopReturnsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queued int
	}{{"holding an event", 3}, {"asleep", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, mu := newPump(0)
				p.Start()
				mu.Lock()
				for i := range tc.queued {
					p.QueueLocked(audio("a", i))
				}
				mu.Unlock()
				synctest.Wait()
				p.Stop()
				p.Stop() // a second Stop does nothing
				p.Wait()
				if got := read(t, p); len(got) != 0 {
					t.Errorf("delivered %d events after Stop", len(got))
				}
			})
		})
	}
}

// Mutations caught: no Space signal when the goroutine takes an event, or
// when a Cancel takes events back, or at the end (a reader waiting for
// room would wait for good).
func TestSpaceIsSignalled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		started bool // the goroutine runs: Stop and Wait it
		act     func(p *Pump, mu *sync.Mutex)
	}{
		{"the goroutine took one", true, func(p *Pump, _ *sync.Mutex) { p.Start(); synctest.Wait() }},
		{"taken back", false, func(p *Pump, mu *sync.Mutex) { mu.Lock(); p.RetractLocked("a"); mu.Unlock() }},
		{"ended", false, func(p *Pump, mu *sync.Mutex) { mu.Lock(); p.EndLocked(errors.New("x")); mu.Unlock() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, mu := newPump(0)
				mu.Lock()
				p.QueueLocked(audio("a", 0))
				p.QueueLocked(audio("a", 1))
				mu.Unlock()
				select {
				case <-p.Space():
					t.Fatal("space signalled by a queued event")
				default:
				}
				tc.act(p, mu)
				select {
				case <-p.Space():
				default:
					t.Error("no space signal")
				}
				if tc.started {
					p.Stop()
					p.Wait()
				}
			})
		})
	}
}

// Mutation caught: the queue's array let go when it empties (PopLocked
// setting nil rather than reslicing): every event would allocate it anew.
func TestQueueAllocationBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	p, _ := newPump(0)
	ev := audio("a", 1)
	got := testing.AllocsPerRun(1000, func() {
		p.QueueLocked(ev)
		p.QueueLocked(ev)
		p.PopLocked()
		p.PopLocked()
	})
	if got > 0 {
		t.Errorf("%v allocations per two events, budget 0", got)
	}
}

// BenchmarkQueuePop is one event queued and taken, under the lock, as the
// reader and the goroutine do it.
func BenchmarkQueuePop(b *testing.B) {
	p, mu := newPump(0)
	ev := audio("a", 1)
	b.ReportAllocs()
	for b.Loop() {
		mu.Lock()
		p.QueueLocked(ev)
		mu.Unlock()
		mu.Lock()
		p.PopLocked()
		mu.Unlock()
	}
}

// BenchmarkDelivery is one event from QueueLocked to the reader of
// Events, through the goroutine.
func BenchmarkDelivery(b *testing.B) {
	p, mu := newPump(64)
	p.Start()
	ev := audio("a", 1)
	b.ReportAllocs()
	for b.Loop() {
		mu.Lock()
		p.QueueLocked(ev)
		mu.Unlock()
		<-p.Events()
	}
	p.Stop()
	p.Wait()
}
