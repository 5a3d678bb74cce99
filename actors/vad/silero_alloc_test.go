//go:build !race

// The race detector changes allocation counts, so the budget is pinned
// without it (as sim/alloc_test.go does for the energy path).

package vad_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// quietSession stands in for the session without allocating per message:
// its stt child hands each frame back to the test's frame pool and counts
// it, its turn child counts the speech marks. Both run on kit mailboxes, as
// the call tree's stages do.
type quietSession struct {
	frames, marks atomic.Int64
}

func (q *quietSession) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); !ok {
		return
	}
	stt := func(c actor.Context) {
		if f, ok := c.Message().(*messages.AudioFrame); ok {
			f.Release()
			q.frames.Add(1)
		}
	}
	turn := func(c actor.Context) {
		switch c.Message().(type) {
		case *messages.SpeechStarted, *messages.SpeechStopped:
			q.marks.Add(1)
		}
	}
	mb := actor.WithMailbox(kit.NewMailboxProducer())
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(stt, mb), string(messages.StageSTT))
	_, _ = ctx.SpawnNamed(actor.PropsFromFunc(turn, mb), string(messages.StageTurn))
}

// TestSileroFramesAllocateNothing pins the Silero path's allocation
// budget: 0 heap allocations per 20 ms frame through the vad actor in model
// mode on the real pool (the frame's samples copied into the window, the
// window submitted to the pool and copied there, the batch run, the score
// sent back to the actor as a message, the speech gate, the state reset
// after a second of silence), while the caller speaks and while the line
// is quiet (about -60 dBFS of noise, not digital zero), with the 16 kHz
// model, with the 8 kHz one (the window decimated on the worker) and with a
// batch interval (the worker's pacing timer). Each run of
// AllocsPerRun is 8 frames (160 ms: exactly 5 windows), so an allocation
// per window shows as 5 per run, not as a fraction that AllocsPerRun's
// integer division would drop; the count is over every goroutine of the
// process (the pool's worker included).
//
// Mutations it catches (each seen failing): CallScorer.Score passing a
// method value (s.result) instead of the cached s.onDone (1 per window);
// the actor sending a new scored message per window instead of its one
// reused answer (1 per window); the pool's worker making its batch slice
// per batch instead of reusing it (1 per window: one window a batch here).
func TestSileroFramesAllocateNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the native runtime, the model and the fixtures")
	}
	w, truth := fixture(t, "en")
	// The fixture, then 3 s of line noise.
	audio := append([]int16(nil), w.Samples...)
	x := uint32(1)
	for range 3 * 16000 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		audio = append(audio, int16(int32(x%65)-32))
	}
	for _, cfg := range []silero.PoolConfig{
		{ModelRate: silero.Rate16k},
		{ModelRate: silero.Rate8k},
		{ModelRate: silero.Rate8k, BatchInterval: 2 * time.Millisecond},
	} {
		cfg.SampleRate, cfg.Workers = silero.Rate16k, 1
		t.Run(fmt.Sprintf("model %d Hz, interval %v", cfg.ModelRate, cfg.BatchInterval), func(t *testing.T) { allocSilero(t, audio, len(truth), cfg) })
	}
}

func allocSilero(t *testing.T, audio []int16, utterances int, cfg silero.PoolConfig) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := silero.NewPool(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		sys := kit.NewSystem(zerolog.Nop())
		q := &quietSession{}
		mb := actor.WithMailbox(kit.NewMailboxProducer())
		sess := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return q }, mb))
		synctest.Wait()
		model := &vad.Model{
			NewScorer: func() (vad.Scorer, error) { return pool.NewScorer(0), nil },
			NewGate: func() vad.Gate {
				g, _ := media.NewSpeechGate(media.SpeechGateConfig{})
				return g
			},
		}
		newDet := func() vad.Detector { d, _ := media.NewEnergyVAD(media.EnergyVADConfig{}); return d }
		pid := sys.Root.Spawn(vad.Props(vad.Config{NewDetector: newDet, Model: model}, kit.NewPeers("silero-alloc", sess), zerolog.Nop(), mb))

		// A pool of frames that stt hands back.
		free := make(chan *messages.AudioFrame, 64)
		release := func(f *messages.AudioFrame) { free <- f }
		for range cap(free) {
			free <- messages.NewPooledFrame(16000, release)
		}
		start := time.Now()
		n, pos := 0, 0
		frame := func() {
			f := <-free
			f.Seq, f.Start = uint64(n), start.Add(time.Duration(n)*messages.FrameDuration)
			copy(f.PCM, audio[pos:pos+320])
			sys.Root.Send(pid, f)
			n++
			pos += 320
			time.Sleep(messages.FrameDuration)
		}
		until := func(at time.Duration) {
			for time.Duration(n)*messages.FrameDuration < at {
				frame()
			}
		}
		measure := func(name string, runs int) {
			got := testing.AllocsPerRun(runs, func() {
				for range 8 {
					frame()
				}
			})
			if got != 0 {
				t.Errorf("%s: %v allocations per 8 frames (5 windows), want 0", name, got)
			}
		}
		// The first utterance is 0.5-2.59 s (its longest pause 49 ms): from
		// 0.9 s the gate has started and stays on. AllocsPerRun's warm-up
		// run is the first 160 ms.
		until(900 * time.Millisecond)
		measure("caller speaking", 5)
		// The last utterance ends at 8.36 s, the gate stops 300 ms later
		// and the model's state is reset 1 s after that: 9.0-10.76 s spans
		// the reset.
		until(9 * time.Second)
		measure("line noise, state reset", 10)
		until(time.Duration(len(audio)/320-1) * messages.FrameDuration)
		time.Sleep(time.Second)
		res, err := sys.Root.RequestFuture(pid, &messages.Describe{}, time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		c := res.(*messages.Description).Counters
		t.Logf("counters %v", c)
		if c["model_resets"] < 1 || c["windows_refused"]+c["window_errors"]+c["windows_skipped"] != 0 {
			t.Errorf("counters %v: want a model reset and every window scored", c)
		}

		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatal(err)
		}
		if err := sys.Root.StopFuture(sess).Wait(); err != nil {
			t.Fatal(err)
		}
		if got := q.frames.Load(); got != int64(n) {
			t.Errorf("%d frames reached stt, %d sent", got, n)
		}
		// The windows measured saw the call they were meant for: a start
		// and a stop per utterance, the model scored them and reset once.
		if got := q.marks.Load(); got != int64(2*utterances) {
			t.Errorf("%d speech marks, want %d", got, 2*utterances)
		}
		st := pool.Stats()
		if want := uint64(n * 320 / 512); st.Completed+1 < want {
			t.Errorf("%d windows scored, want %d", st.Completed, want)
		}
		time.Sleep(2 * time.Second) // protoactor's dead-letter throttle
	})
}
