package pacer_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// stall is a delivery stall of the stand-in transport (none when from is
// 0): the frames and marks it gets from from on (after the first audio) wait, not written,
// until to, or until the clear when to is 0; at the clear what still
// waits is written first (the transport starved: its mailbox holds it
// ahead of the clear) or dropped (the socket starved: the connection
// drops its queue at a clear).
//
// delay puts a queue between the transport and the caller that a clear
// empties (a websocket's outbox): a frame comes delay after its write,
// and what has not come at the clear is dropped.
type stall struct {
	from, to time.Duration
	drop     bool
	delay    time.Duration
}

// playout is what the stand-in caller played: when each frame of epoch 1
// started, and when the clear came.
type playout struct {
	mu      sync.Mutex
	started map[time.Duration]time.Time // by the frame's offset
	come    map[time.Duration]time.Time // when it reached the caller
	clearAt time.Time
}

// heardWords is how many of the words at offsets the caller heard: those
// whose first frame started before the clear, in order.
func (p *playout) heardWords(offsets []time.Duration) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, off := range offsets {
		s, ok := p.started[off]
		if !ok || !s.Before(p.clearAt) {
			break
		}
		n++
	}
	return n
}

// caller is the stand-in transport and its caller in one: it writes the
// pacer's frames (Release: the transport has written it) except while
// stalled, and the caller plays each frame when it has come and the one
// before it has ended, and echoes a mark once the audio before it has
// played. The echo comes back at once: the strictest case, where the
// confirmed position plus the time since is exactly the caller's while
// frames come in time.
type caller struct {
	stall   stall
	pacer   *actor.PID
	p       *playout
	t0      time.Time
	playEnd time.Time
	held    []any // frames and marks waiting, in order
	timers  []*time.Timer
}

func (c *caller) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.OutputAudio, *messages.Mark:
		now := time.Now()
		if c.t0.IsZero() {
			c.t0 = now
		}
		since := now.Sub(c.t0)
		if c.stall.from > 0 && since >= c.stall.from && (c.stall.to == 0 || since < c.stall.to) {
			c.held = append(c.held, m)
			return
		}
		c.flush(ctx, now)
		c.write(ctx, m, now)
	case *messages.Clear:
		now := time.Now()
		if c.stall.drop {
			for _, h := range c.held {
				if f, ok := h.(*messages.OutputAudio); ok {
					f.Release()
				}
			}
			c.held = nil
		}
		c.flush(ctx, now)
		c.p.mu.Lock()
		c.p.clearAt = now
		for off, come := range c.p.come {
			if come.After(now) {
				delete(c.p.started, off) // still queued: dropped
			}
		}
		c.p.mu.Unlock()
	case *actor.Stopping:
		for _, t := range c.timers {
			t.Stop()
		}
	}
}

func (c *caller) flush(ctx actor.Context, now time.Time) {
	for _, h := range c.held {
		c.write(ctx, h, now)
	}
	c.held = c.held[:0]
}

func (c *caller) write(ctx actor.Context, m any, now time.Time) {
	switch m := m.(type) {
	case *messages.OutputAudio:
		come := now.Add(c.stall.delay)
		start := come
		if c.playEnd.After(come) {
			start = c.playEnd
		}
		c.playEnd = start.Add(messages.FrameDuration)
		if m.Epoch == 1 {
			c.p.mu.Lock()
			c.p.started[m.Offset] = start
			c.p.come[m.Offset] = come
			c.p.mu.Unlock()
		}
		m.Release()
	case *messages.Mark:
		root, pid, name := ctx.ActorSystem().Root, c.pacer, m.Name
		due := max(c.playEnd.Sub(now), c.stall.delay, 0)
		c.timers = append(c.timers, time.AfterFunc(due, func() {
			root.Send(pid, &messages.MarkEcho{Name: name, At: time.Now()})
		}))
	}
}

// stallSession is the session of a pacer with confirmations and the
// stand-in caller; its llm child hands on the Heard messages.
type stallSession struct {
	stall stall
	p     *playout
	heard chan *messages.Heard
}

func (s *stallSession) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	peers := kit.NewPeers("stall-call", ctx.Self())
	heard := s.heard
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if h, ok := c.Message().(*messages.Heard); ok {
			heard <- h
		}
	}), string(messages.StageLLM))
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), string(messages.StageTurn))
	_, _ = ctx.SpawnNamed(actor.PropsFromProducer(func() actor.Actor {
		return &caller{stall: s.stall, pacer: peers.Pacer, p: s.p}
	}), string(messages.StageTransport))
	cfg := pacer.Config{Rate: 8000, ConfirmEvery: 100 * time.Millisecond}
	_, _ = ctx.SpawnNamed(pacer.Props(cfg, peers), string(messages.StagePacer))
}

// TestStallIsNotHeard: a delivery stall after a mark's echo, then a
// barge-in. The words the pacer counts as heard never exceed what the
// caller heard — not the frames still waiting in the transport, nor a
// stall's backlog faster than real time, nor, behind a queue that a
// clear empties, a frame that had not come yet — and lack at most one
// word (the lead margin). stalled_cuts counts the cuts the writes
// bounded. (Mutations seen failing: the confirmed position plus the time
// since its echo, as before the fix — 8, 8, 11 and 6 words counted where
// the caller heard 5 in the first four stalled cases; the stall's backlog
// played from when each frame was due, not from its write — 11 and 6
// counted in the backlog cases; the lag the echo shows left out — 6
// counted behind the queue.)
func TestStallIsNotHeard(t *testing.T) {
	const word = 100 * time.Millisecond
	tests := []struct {
		name    string
		stall   stall
		cutAt   time.Duration // after the first audio
		stalled uint64        // stalled_cuts
	}{
		{"in time", stall{}, 1010 * time.Millisecond, 0},
		{"stalled at the barge-in, backlog dropped", stall{from: 410 * time.Millisecond, drop: true}, 810 * time.Millisecond, 1},
		{"stalled at the barge-in, backlog written first", stall{from: 410 * time.Millisecond}, 810 * time.Millisecond, 1},
		{"a stall's backlog playing", stall{from: 410 * time.Millisecond, to: 1000 * time.Millisecond}, 1050 * time.Millisecond, 1},
		{"a short stall inside a word", stall{from: 430 * time.Millisecond, to: 470 * time.Millisecond}, 530 * time.Millisecond, 1},
		{"a short stall behind a queue a clear empties", stall{from: 430 * time.Millisecond, to: 470 * time.Millisecond, delay: 30 * time.Millisecond}, 560 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sys := kit.NewSystem(zerolog.Nop())
				p := &playout{started: map[time.Duration]time.Time{}, come: map[time.Duration]time.Time{}}
				heard := make(chan *messages.Heard, 4)
				sess := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor {
					return &stallSession{stall: tt.stall, p: p, heard: heard}
				}))
				pid := kit.NewPeers("stall-call", sess).Pacer
				synctest.Wait()
				var offsets []time.Duration
				for i := range 30 {
					off := time.Duration(i) * word
					offsets = append(offsets, off)
					sys.Root.Send(pid, &messages.TTSWord{Epoch: 1, Text: "w", Offset: off})
				}
				sys.Root.Send(pid, &messages.TTSAudio{Epoch: 1, Rate: 8000, PCM: make([]int16, 8*3000)})
				sys.Root.Send(pid, &messages.TTSEnded{Epoch: 1})
				time.Sleep(tt.cutAt)
				sys.Root.Send(pid, &messages.Interrupt{Epoch: 2, At: time.Now()})
				sys.Root.Send(pid, &messages.HeardQuery{Epoch: 1})
				synctest.Wait()
				if len(heard) != 1 {
					t.Fatalf("%d Heard answers, want 1", len(heard))
				}
				got, want := (<-heard).Words, p.heardWords(offsets)
				if got > want {
					t.Errorf("the pacer counts %d words heard, the caller heard %d", got, want)
				}
				if got < want-1 {
					t.Errorf("the pacer counts %d words heard, the caller heard %d: more than one word short", got, want)
				}
				d, err := sys.Root.RequestFuture(pid, &messages.Describe{}, time.Second).Result()
				if err != nil {
					t.Fatal(err)
				}
				if n := d.(*messages.Description).Counters["stalled_cuts"]; n != tt.stalled {
					t.Errorf("stalled_cuts %d, want %d", n, tt.stalled)
				}
				t.Logf("heard %d words, counted %d", want, got)
				if err := sys.Root.StopFuture(sess).Wait(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
			})
		})
	}
}
