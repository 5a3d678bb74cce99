//go:build !race

// The race detector changes allocation counts (and sync.Pool drops items
// at random under it), so the allocation budget is pinned without it.

package sim

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/providertest"
)

// TestSteadyFramesAllocateNothing pins the data path's allocation budget:
// 0 heap allocations per 20 ms frame through transport in -> vad -> stt
// (mock) while the caller speaks and while they are silent, and through
// tts (mock) -> pacer -> transport out while the bot speaks. Each window
// advances virtual time by one frame per run, so AllocsPerRun gives
// allocations per frame, counted over every goroutine of the process.
//
// The mock TTS delivers an answer's audio in one burst, so the pacer cuts
// its frames when the audio arrives (pooled frames, per chunk) and the
// steady state of the output side is the pacer's tick, the release and the
// transport's write. Provider chunks themselves (a PCM slice and a TTSAudio
// message per chunk) are per-chunk costs, not counted here.
//
// Mutations it catches (each seen failing): the kit mailbox scheduling a
// method value instead of its cached run func (2 per frame); the transport
// reader allocating a frame per read (2 per frame); the pacer arming a new
// timer per frame instead of resetting its own (2 per frame).
func TestSteadyFramesAllocateNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewScenario("alloc").Silence(500*msec).Speak("One long sentence from the caller.", 3*time.Second).
			Silence(12 * time.Second)
		c := base(s, providertest.Response{Text: longAnswer})
		// No interims: they are per-event messages, not per-frame work.
		c.STT = providertest.NewMockSTT(providertest.STTConfig{InterimEvery: time.Hour}, s.Utterances())
		c.Linger = time.Second
		measure := func(name string, at time.Duration) Action {
			return Action{At: at, Do: func(*Handle) {
				if got := testing.AllocsPerRun(40, func() { time.Sleep(frame) }); got != 0 {
					t.Errorf("%s: %v allocations per frame, want 0", name, got)
				}
			}}
		}
		// Speech 0.5-3.5 s; the answer plays from 4.45 s for about 8 s.
		c.During = []Action{
			measure("caller speaking", 1500*msec+10*msec),
			measure("bot speaking, caller silent", 6*time.Second+10*msec),
			measure("both silent", 14*time.Second+10*msec),
		}
		r, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckInvariants(r, 0); err != nil {
			t.Fatal(err)
		}
		if r.Interrupts() != 0 || r.Turns() != 1 {
			t.Fatalf("turns %d, interrupts %d: the windows did not see the call they were meant for", r.Turns(), r.Interrupts())
		}
	})
}

const frame = 20 * time.Millisecond
