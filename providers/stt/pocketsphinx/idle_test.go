package pocketsphinx

import (
	"errors"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/internal/leaktest"
)

// TestIdleCallersCostNoDecoder is issue 14's defect 2 at the provider: with
// PoolSize 2, twenty open sessions that send only silence (no speech
// start: the VAD hears none) hold no decoder, and a caller who then
// speaks gets a decoder at once and its final with the words said. When
// every session has closed no goroutine of theirs is left.
// Mutation caught (seen failing): a decoder taken at Connect and held for
// the session's life, as before the fix (the third Connect waits
// AcquireTimeout and fails with "a free decoder (all 2 busy)").
func TestIdleCallersCostNoDecoder(t *testing.T) {
	needEngine(t)
	fx := loadFixture(t, "en")
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		e, err := New(Config{PoolSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		silence := make([]int16, 2*16000)
		idle := make([]*Session, 20)
		for i := range idle {
			idle[i] = connect(t, e, t.Context())
			sendFrames(t, idle[i], silence)
		}
		synctest.Wait()
		if st := e.Stats(); st.Loaded != 0 || st.Acquired != 0 {
			t.Fatalf("20 silent sessions: %+v, want no decoder loaded or taken", st)
		}
		caller := connect(t, e, t.Context())
		seg := fx.segments[0]
		sendUtterance(t, caller, fx.pcm, 0, seg.End+hangover, seg)
		if err := caller.Finalize(); err != nil {
			t.Fatal(err)
		}
		_, final := untilFinal(t, caller)
		if got := words(final.Text); got != wantFlite[0] {
			t.Errorf("the speaking caller's final %q, want %q", got, wantFlite[0])
		}
		st := e.Stats()
		if st.Acquired != 1 || st.Waited != 0 || st.Loaded != 1 || st.Idle != 1 {
			t.Errorf("stats %+v, want 1 decoder taken without a wait and given back", st)
		}
		for _, s := range append(idle, caller) {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
			if d := s.Dropped(); d != 0 {
				t.Errorf("dropped %d samples", d)
			}
		}
		// A goroutine that was waited for may still be on its way out
		// (its done signal is its last act): let the bubble settle.
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Errorf("%d goroutines left after every session closed", n)
		}
	})
}

// TestSendAudioWhileIdleAllocs pins a session's audio path while it holds
// no decoder at zero allocations: SendAudio's copy into the queue and the
// worker's move into the pre-roll ring. The pool's load fails, so a
// decoder taken by mistake would show as an Err event.
// Mutation caught (seen failing): a pre-roll that appends each chunk to a
// slice (and trims its front) instead of writing a fixed ring.
func TestSendAudioWhileIdleAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	cfg := Config{}.withDefaults()
	p := newPool(1, -1, func() (recognizer, error) { return nil, errors.New("no decoder in this test") }, nil)
	s := startSession(t.Context(), cfg, p, &usage{})
	defer s.Close()
	pcm := ramp(0, frame)
	// Fill the pre-roll past its size first: a ring that grows would
	// stop allocating only once it is as large as the audio sent.
	for range 2 * cfg.samples(cfg.PreRoll) / frame {
		_ = s.SendAudio(pcm)
	}
	drained := func() {
		for queued(s.in) > 0 {
			runtime.Gosched() // AllocsPerRun runs on one P: let the worker take it
		}
	}
	drained()
	if a := testing.AllocsPerRun(500, func() {
		if err := s.SendAudio(pcm); err != nil {
			t.Fatal(err)
		}
		drained()
	}); a != 0 {
		t.Errorf("SendAudio while idle: %v allocations per chunk, want 0", a)
	}
	select {
	case ev := <-s.Events():
		t.Errorf("event %+v from a session that heard no speech start", ev)
	default:
	}
}

// queued is how many samples wait in b for the worker.
func queued(b *inbox) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// TestPreroll walks the ring through partial fills, wrap-around, a chunk
// larger than the ring and a drain in steps.
// Mutations caught: the oldest samples kept instead of the latest, a
// wrapped drain out of order, a step bound ignored, the ring not emptied
// by a drain.
func TestPreroll(t *testing.T) {
	cases := []struct {
		name   string
		size   int
		writes []int // chunk sizes, the ramp continuing
		step   int
		want   []int16
		pieces []int // sizes handed to f
	}{
		{name: "empty", size: 8, step: 4},
		{name: "partial", size: 8, writes: []int{3}, step: 4, want: ramp(0, 3), pieces: []int{3}},
		{name: "exactly full", size: 8, writes: []int{5, 3}, step: 8, want: ramp(0, 8), pieces: []int{8}},
		{name: "wrapped keeps the latest", size: 8, writes: []int{5, 5}, step: 8, want: ramp(2, 8), pieces: []int{6, 2}},
		{name: "chunk over the size", size: 8, writes: []int{3, 11}, step: 8, want: ramp(6, 8), pieces: []int{8}},
		{name: "steps", size: 8, writes: []int{7}, step: 3, want: ramp(0, 7), pieces: []int{3, 3, 1}},
		{name: "no ring", size: 0, writes: []int{7}, step: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPreroll(c.size)
			next := 0
			for _, n := range c.writes {
				r.write(ramp(next, n))
				next += n
			}
			var got []int16
			var pieces []int
			if err := r.drain(c.step, func(p []int16) error {
				got = append(got, p...)
				pieces = append(pieces, len(p))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) || !slices.Equal(pieces, c.pieces) {
				t.Errorf("drained %v in %v, want %v in %v", got, pieces, c.want, c.pieces)
			}
			if err := r.drain(c.step, func([]int16) error { t.Error("second drain got samples"); return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkSendAudioIdle is a silent caller's cost per 20 ms chunk: the
// copy into the queue and the worker's move into the pre-roll.
func BenchmarkSendAudioIdle(b *testing.B) {
	cfg := Config{}.withDefaults()
	p := newPool(1, -1, func() (recognizer, error) { return nil, errors.New("no decoder in this benchmark") }, nil)
	s := startSession(b.Context(), cfg, p, &usage{})
	defer s.Close()
	pcm := ramp(0, frame)
	b.ReportAllocs()
	for b.Loop() {
		_ = s.SendAudio(pcm)
	}
	if d := s.Dropped(); d > 0 {
		b.ReportMetric(float64(d)/float64(b.N*frame), "dropped/sample")
	}
}
