package wscall

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/internal/leaktest"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// ramp is n samples counting up from start.
func ramp(start, n int) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(start + i)
	}
	return out
}

// drain reads every queued frame (the inbox must be closed).
func drain(t *testing.T, b *Inbox) (pcm []int16, seqs []uint64, starts []time.Time) {
	t.Helper()
	f := messages.NewPooledFrame(b.rate, nil)
	for {
		err := b.ReadFrame(context.Background(), f)
		if errors.Is(err, conn.ErrClosed) {
			return pcm, seqs, starts
		}
		if err != nil {
			t.Fatalf("ReadFrame: %v", err)
		}
		pcm = append(pcm, f.PCM...)
		seqs = append(seqs, f.Seq)
		starts = append(starts, f.Start)
	}
}

// TestInboxRechunks: chunks of any length come out as whole 20 ms frames
// in order, the last partial one padded with silence at Close, and the
// frame starts step by 20 ms from the first chunk's capture. Mutations
// caught: dropping the partial frame at Close (the padded tail
// missing), a Start not derived from Seq (steps of 0), t0 not moved back
// by the first chunk's length.
func TestInboxRechunks(t *testing.T) {
	cases := []struct {
		name   string
		chunks []int // lengths, at 8 kHz
	}{
		{name: "20 ms chunks", chunks: []int{160, 160, 160}},
		{name: "10 ms chunks", chunks: []int{80, 80, 80, 80, 80}},
		{name: "30 ms chunks", chunks: []int{240, 240}},
		{name: "odd sizes", chunks: []int{1, 159, 321, 7}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stats := NewCounters("frames_in", "in_dropped", "gap_frames")
				b := NewInbox(8000, 64, stats)
				var want []int16
				pos := 0
				began := time.Now()
				for i, n := range tc.chunks {
					chunk := ramp(pos, n)
					if i%2 == 0 {
						b.Push(chunk)
					} else {
						b.PushFunc(n, func(dst []int16, from int) { copy(dst, chunk[from:]) })
					}
					want = append(want, chunk...)
					pos += n
				}
				b.Close(conn.ErrClosed)
				for len(want)%160 != 0 {
					want = append(want, 0)
				}
				pcm, seqs, starts := drain(t, b)
				if !slices.Equal(pcm, want) {
					t.Fatalf("pcm differs: got %d samples, want %d", len(pcm), len(want))
				}
				t0 := began.Add(-time.Duration(tc.chunks[0]) * time.Second / 8000)
				for i := range seqs {
					if seqs[i] != uint64(i) || !starts[i].Equal(t0.Add(time.Duration(i)*messages.FrameDuration)) {
						t.Fatalf("frame %d: seq %d start %v", i, seqs[i], starts[i].Sub(t0))
					}
				}
				if got := stats.Get("frames_in"); got != uint64(len(seqs)) {
					t.Fatalf("frames_in %d, want %d", got, len(seqs))
				}
			})
		})
	}
}

// TestInboxSilenceAndDrops: a gap becomes silence on the timeline; a gap
// longer than the queue advances Seq without making the frames; a
// reader that falls behind loses the oldest frames. Mutations caught:
// Silence not completing the partial frame first (audio shifted), the
// skip not advancing next (Seq continuous after a long gap), emitting
// into a full ring without dropping the head (the newest frame lost).
func TestInboxSilenceAndDrops(t *testing.T) {
	stats := NewCounters("frames_in", "in_dropped", "gap_frames")
	b := NewInbox(8000, 4, stats)
	b.Push(ramp(1, 80))
	b.Silence(80 + 160) // completes frame 0, then frame 1 of silence
	b.Push(ramp(1000, 160))
	b.Close(conn.ErrClosed)
	pcm, seqs, _ := drain(t, b)
	want := slices.Concat(ramp(1, 80), make([]int16, 240), ramp(1000, 160))
	if !slices.Equal(pcm, want) || !slices.Equal(seqs, []uint64{0, 1, 2}) {
		t.Fatalf("gap: seqs %v, pcm equal %v", seqs, slices.Equal(pcm, want))
	}
	if got := stats.Get("gap_frames"); got != 2 {
		t.Fatalf("gap_frames %d, want 2", got)
	}

	stats = NewCounters("frames_in", "in_dropped", "gap_frames")
	b = NewInbox(8000, 4, stats)
	b.Push(ramp(1, 160))
	b.Silence(160 * 10) // 10 frames of gap, 4 fit
	b.Push(ramp(5000, 160))
	b.Close(conn.ErrClosed)
	pcm, seqs, _ = drain(t, b)
	if !slices.Equal(seqs, []uint64{8, 9, 10, 11}) {
		t.Fatalf("long gap: seqs %v, want [8 9 10 11]", seqs)
	}
	if !slices.Equal(pcm[3*160:], ramp(5000, 160)) || slices.ContainsFunc(pcm[:3*160], func(s int16) bool { return s != 0 }) {
		t.Fatalf("long gap: frames are not 3 of silence then the new audio")
	}
	if got := stats.Get("in_dropped"); got != 8 {
		t.Fatalf("in_dropped %d, want 8", got)
	}
}

// TestInboxReadFrameEnds: ReadFrame returns on ctx and on Close, and a
// blocked reader leaves no goroutine. Mutation caught: not selecting on
// done (a reader blocked before Close never returns: the bubble
// deadlocks).
func TestInboxReadFrameEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := leaktest.Snapshot()
		b := NewInbox(16000, 4, NewCounters())
		f := messages.NewPooledFrame(16000, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { errs <- b.ReadFrame(ctx, f) }()
		synctest.Wait()
		cancel()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("after cancel: %v", err)
		}
		go func() { errs <- b.ReadFrame(context.Background(), f) }()
		synctest.Wait()
		b.Close(errors.Join(conn.ErrClosed, errors.New("bye")))
		if err := <-errs; !errors.Is(err, conn.ErrClosed) {
			t.Fatalf("after Close: %v", err)
		}
		synctest.Wait()
		if n := leaktest.Snapshot().NewSince(base); n != 0 {
			t.Fatalf("%d goroutines left", n)
		}
	})
}

// TestInboxAllocs: pushing and reading a frame allocates nothing.
// Mutation caught: a per-frame make in emit or ReadFrame.
func TestInboxAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	b := NewInbox(8000, 8, NewCounters("frames_in"))
	chunk := ramp(0, 160)
	f := messages.NewPooledFrame(8000, nil)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		b.PushFunc(len(chunk), func(dst []int16, from int) { copy(dst, chunk[from:]) })
		if err := b.ReadFrame(ctx, f); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per frame, want 0", allocs)
	}
}
