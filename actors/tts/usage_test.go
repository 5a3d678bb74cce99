package tts_test

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/tts"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/rs/zerolog"
)

// usageBench keeps the call events the tts stage sends its session and
// the audio it sends the pacer, by epoch.
type usageBench struct {
	mu     sync.Mutex
	events []messages.CallEvent
	played map[messages.Epoch]time.Duration
}

func (b *usageBench) session(c actor.Context) {
	if e, ok := c.Message().(*messages.CallEvent); ok {
		b.mu.Lock()
		b.events = append(b.events, *e)
		b.mu.Unlock()
	}
}

func (b *usageBench) pacer(c actor.Context) {
	if a, ok := c.Message().(*messages.TTSAudio); ok {
		b.mu.Lock()
		b.played[a.Epoch] += time.Duration(len(a.PCM)) * time.Second / time.Duration(a.Rate)
		b.mu.Unlock()
	}
}

// TestContextUsage: each provider context that was sent text puts the
// characters sent and the audio received for it in the call record, once,
// when it ends: at its final flush, at a barge-in's cancel (the audio up
// to the cut), at the call's end with the context open, and as a segment
// closes for a filler clip (the clip's audio is not the provider's); with
// nobody observing nothing is sent. Mutations caught (seen failing): the
// cancel not telling ("barge-in": epoch 1 missing), the open context not
// told at the stop ("open at the end": none), the segment closed for a
// clip not told ("filler clip between": one context with both texts), the
// clip's audio counted as received, the characters not counted (0), the
// audio counted twice, and the observer check dropped with a plain send
// ("off").
func TestContextUsage(t *testing.T) {
	const (
		answer     = "Your table for four is booked."
		clipPhrase = "One moment."
		clipAudio  = 400 * time.Millisecond
	)
	clip, err := tts.NewClip(clipPhrase, 16000, make([]int16, 16000*clipAudio/time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	clips, err := tts.NewClipStore(clip)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		epoch messages.Epoch
		chars int
	}
	cases := []struct {
		name     string
		observed bool
		// steps are sent one after the other, each after the stage has
		// handled the one before and the virtual clock moved 50 ms on; a
		// time.Duration step waits that long.
		steps []any
		want  []want
	}{
		{name: "filler clip between", observed: true,
			steps: []any{&messages.TextDelta{Epoch: 1, Text: "Let me check."}, &messages.Filler{Epoch: 1, Text: clipPhrase},
				&messages.TextDelta{Epoch: 1, Text: "Booked."}, &messages.TextFlush{Epoch: 1, Final: true}},
			want: []want{{1, len("Let me check.")}, {1, len("Booked.")}}},
		{name: "answer", observed: true,
			steps: []any{&messages.TextDelta{Epoch: 1, Text: "Your table "}, &messages.TextDelta{Epoch: 1, Text: "for four is booked."}, &messages.TextFlush{Epoch: 1, Final: true}},
			want:  []want{{1, len(answer)}}},
		{name: "mid-answer flush", observed: true,
			steps: []any{&messages.TextDelta{Epoch: 1, Text: "One moment"}, &messages.TextFlush{Epoch: 1}, &messages.TextDelta{Epoch: 1, Text: "done."}, &messages.TextFlush{Epoch: 1, Final: true}},
			want:  []want{{1, len("One moment") + 1 + len("done.")}}},
		{name: "barge-in", observed: true,
			steps: []any{&messages.TextDelta{Epoch: 1, Text: answer}, 500 * time.Millisecond, &messages.Interrupt{Epoch: 2}, &messages.TextDelta{Epoch: 2, Text: "Sorry?"}, &messages.TextFlush{Epoch: 2, Final: true}},
			want:  []want{{1, len(answer)}, {2, len("Sorry?")}}},
		{name: "open at the end", observed: true,
			steps: []any{&messages.TextDelta{Epoch: 1, Text: answer}, 500 * time.Millisecond},
			want:  []want{{1, len(answer)}}},
		{name: "off",
			steps: []any{&messages.TextDelta{Epoch: 1, Text: answer}, &messages.Interrupt{Epoch: 2}, &messages.TextDelta{Epoch: 2, Text: "Sorry?"}, &messages.TextFlush{Epoch: 2, Final: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := leaktest.Snapshot()
				sys := kit.NewSystem(zerolog.Nop())
				b := &usageBench{played: map[messages.Epoch]time.Duration{}}
				session := sys.Root.Spawn(actor.PropsFromFunc(b.session))
				pacer := sys.Root.Spawn(actor.PropsFromFunc(b.pacer))
				mock := providertest.NewMockTTS(providertest.TTSConfig{Paced: true})
				pid := sys.Root.Spawn(tts.Props(mock, kit.Peers{Session: session, Pacer: pacer, Events: c.observed}, clips))
				for _, m := range c.steps {
					synctest.Wait()
					if d, ok := m.(time.Duration); ok {
						time.Sleep(d)
						continue
					}
					sys.Root.Send(pid, m)
					time.Sleep(50 * time.Millisecond)
				}
				time.Sleep(5 * time.Second) // the answers play out
				synctest.Wait()
				for _, p := range []*actor.PID{pid, session, pacer} {
					if err := sys.Root.StopFuture(p).Wait(); err != nil {
						t.Fatal(err)
					}
					synctest.Wait() // the stage's last event reaches the session before its stop
				}
				b.mu.Lock()
				var got []want
				received := map[messages.Epoch]time.Duration{}
				for _, e := range b.events {
					if e.Kind != messages.EventUsage || e.Usage == nil {
						t.Errorf("event %v without usage", e.Kind)
						continue
					}
					u := *e.Usage
					if u.Kind != messages.UsageTTS || u.Vendor != "mock" {
						t.Errorf("usage %+v, want tts of vendor mock", u)
					}
					if u.Audio == 0 {
						t.Errorf("epoch %d: a context without audio", e.Epoch)
					}
					received[e.Epoch] += u.Audio
					got = append(got, want{e.Epoch, u.Characters})
				}
				// The audio received is the audio played, but for the clip's.
				for epoch, d := range received {
					if epoch == 1 && c.name == "filler clip between" {
						d += clipAudio
					}
					if d != b.played[epoch] {
						t.Errorf("epoch %d: audio received (and clips) %v, the pacer got %v", epoch, d, b.played[epoch])
					}
				}
				b.mu.Unlock()
				if !slices.Equal(got, c.want) {
					t.Errorf("usage per context %v, want %v", got, c.want)
				}
				time.Sleep(sys.Config.DeadLetterThrottleInterval + messages.FrameDuration)
				synctest.Wait()
				if n := leaktest.Snapshot().NewSince(base); n != 0 {
					t.Errorf("%d goroutines left after the actor stopped", n)
				}
			})
		})
	}
}
