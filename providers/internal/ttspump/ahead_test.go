package ttspump

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers"
)

func ack(ctx string) providers.TTSEvent {
	return providers.TTSEvent{Kind: providers.TTSCancelled, ContextID: ctx}
}

// Mutations caught: the ack put at the very front (two Cancels' acks
// come out in reverse order), or at the back (the ack waits behind the
// audio of the context being spoken); the freed slot before the head not
// reused or overwritten wrongly ("after a pop").
func TestQueueAheadLocked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queued []providers.TTSEvent
		popped int
		ahead  []providers.TTSEvent
		want   []string
	}{
		{
			name:   "ahead of audio",
			queued: []providers.TTSEvent{audio("a", 1), audio("a", 2)},
			ahead:  []providers.TTSEvent{ack("b")},
			want:   []string{short(ack("b")), "a/1/1", "a/1/2"},
		},
		{
			name:   "acks in their order",
			queued: []providers.TTSEvent{audio("a", 1)},
			ahead:  []providers.TTSEvent{ack("b"), ack("c"), ack("d")},
			want:   []string{short(ack("b")), short(ack("c")), short(ack("d")), "a/1/1"},
		},
		{
			name:   "after a pop",
			queued: []providers.TTSEvent{audio("a", 1), audio("a", 2), audio("a", 3)},
			popped: 1,
			ahead:  []providers.TTSEvent{ack("b"), ack("c")},
			want:   []string{short(ack("b")), short(ack("c")), "a/1/2", "a/1/3"},
		},
		{
			name:  "empty",
			ahead: []providers.TTSEvent{ack("b")},
			want:  []string{short(ack("b"))},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPump(0)
			for _, ev := range tc.queued {
				p.QueueLocked(ev)
			}
			for range tc.popped {
				p.PopLocked()
			}
			for _, ev := range tc.ahead {
				p.QueueAheadLocked(ev)
			}
			if got := drain(p); !slices.Equal(got, tc.want) {
				t.Errorf("queue %q, want %q", got, tc.want)
			}
		})
	}
}

// Mutation caught: AcksLocked not counting the ack held out to the reader
// (a second Cancel of the same context would queue a second ack).
func TestAcksLocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, mu := newPump(0)
		mu.Lock()
		p.QueueAheadLocked(ack("a"))
		p.QueueAheadLocked(ack("b"))
		p.QueueLocked(audio("c", 1))
		mu.Unlock()
		p.Start()
		synctest.Wait() // the goroutine holds a's ack out
		mu.Lock()
		for _, tc := range []struct {
			ctx string
			has bool
		}{{"a", true}, {"b", true}, {"c", false}} {
			if n, has := p.AcksLocked(tc.ctx); n != 2 || has != tc.has {
				t.Errorf("AcksLocked(%q) = %d, %v; want 2, %v", tc.ctx, n, has, tc.has)
			}
		}
		mu.Unlock()
		p.Stop()
		p.Wait()
	})
}

// The event held out to a reader who does not read yet: a Cancel takes
// it back, an ack queued ahead overtakes it, a failure drops it.
// Mutations caught: the held event not watched by RetractLocked (the
// cancelled context's audio reaches the caller after Cancel returned);
// the held event not put back behind the ack (lost, or ahead of it);
// FailLocked delivering what was queued before the failure, or without
// its context.
func TestTheEventHeldOut(t *testing.T) {
	fail := errors.New("synthesis failed")
	for _, tc := range []struct {
		name string
		act  func(p *Pump) int // what RetractLocked took, else 0
		want []string
		n    int
	}{
		{
			name: "taken back",
			act:  func(p *Pump) int { return p.RetractLocked("a") },
			want: []string{"b/1/3"},
			n:    2,
		},
		{
			name: "another context's cancel",
			act:  func(p *Pump) int { return p.RetractLocked("z") },
			want: []string{"a/1/1", "a/1/2", "b/1/3"},
		},
		{
			name: "overtaken by an ack",
			act:  func(p *Pump) int { p.QueueAheadLocked(ack("b")); return 0 },
			want: []string{short(ack("b")), "a/1/1", "a/1/2", "b/1/3"},
		},
		{
			name: "failed over",
			act:  func(p *Pump) int { p.FailLocked(fail, "a"); return 0 },
			want: []string{short(providers.TTSEvent{Kind: providers.TTSError, ContextID: "a"})},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, mu := newPump(0)
				mu.Lock()
				p.QueueLocked(audio("a", 1))
				p.QueueLocked(audio("a", 2))
				p.QueueLocked(audio("b", 3))
				mu.Unlock()
				p.Start()
				synctest.Wait() // a/1 is held out, nobody reads
				mu.Lock()
				if n := tc.act(p); n != tc.n {
					t.Errorf("took back %d, want %d", n, tc.n)
				}
				mu.Unlock()
				synctest.Wait()
				var got []string
				var errEv providers.TTSEvent
				for len(got) < len(tc.want) {
					ev := <-p.Events()
					got = append(got, short(ev))
					if ev.Kind == providers.TTSError {
						errEv = ev
					}
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("delivered %q, want %q", got, tc.want)
				}
				if errEv.Kind == providers.TTSError {
					if _, open := <-p.Events(); open || !errors.Is(errEv.Err, fail) {
						t.Errorf("after the failure: open %v, err %v", open, errEv.Err)
					}
				}
				p.Stop()
				p.Wait()
			})
		})
	}
}
