package vad_test

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// markLog records the speech markLog an actor receives, in order.
type markLog struct {
	mu  sync.Mutex
	got []string
}

func (m *markLog) props() *actor.Props {
	return actor.PropsFromFunc(func(ctx actor.Context) {
		var what string
		switch ctx.Message().(type) {
		case *messages.SpeechStarted:
			what = "start"
		case *messages.SpeechStopped:
			what = "stop"
		default:
			return
		}
		m.mu.Lock()
		m.got = append(m.got, what)
		m.mu.Unlock()
	})
}

func (m *markLog) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.got)
}

// TestSpeechMarksReachSTT: the VAD tells stt both of its decisions, the
// start (a recognizer that holds a decoder only while the caller speaks
// takes it then) and the stop, as it tells turn: one decision, two
// listeners, nobody detects speech again.
// Mutation caught (seen failing): the start sent to turn only (stt gets
// [stop]).
func TestSpeechMarksReachSTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		sys := kit.NewSystem(zerolog.Nop())
		var toSTT, toTurn markLog
		stt, turn := sys.Root.Spawn(toSTT.props()), sys.Root.Spawn(toTurn.props())
		cfg := vad.Config{NewDetector: func() vad.Detector {
			d, err := media.NewEnergyVAD(media.EnergyVADConfig{Threshold: 500, StartAfter: 60 * time.Millisecond, StopAfter: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}}
		pid := sys.Root.Spawn(vad.Props(cfg, kit.Peers{STT: stt, Turn: turn}, zerolog.Nop()))
		start := time.Now()
		for i := range 100 { // 2 s: silence, 1 s of speech, silence
			f := &messages.AudioFrame{Seq: uint64(i), Rate: 16000, Start: start.Add(time.Duration(i) * messages.FrameDuration), PCM: make([]int16, 320)}
			if i >= 25 && i < 75 {
				for j := range f.PCM {
					f.PCM[j] = 4000
					if j/20%2 == 0 {
						f.PCM[j] = -4000
					}
				}
			}
			sys.Root.Send(pid, f)
		}
		synctest.Wait()
		want := []string{"start", "stop"}
		if got := toSTT.list(); !slices.Equal(got, want) {
			t.Errorf("stt got %v, want %v", got, want)
		}
		if got := toTurn.list(); !slices.Equal(got, want) {
			t.Errorf("turn got %v, want %v", got, want)
		}
		for _, p := range []*actor.PID{pid, stt, turn} {
			if err := sys.Root.StopFuture(p).Wait(); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after the actors stopped", n)
		}
	})
}
