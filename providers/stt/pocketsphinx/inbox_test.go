package pocketsphinx

import (
	"errors"
	"testing"

	"github.com/brisvox/brisvox/providers"
)

// ramp is n samples counting up from first, so order and gaps show.
func ramp(first, n int) []int16 {
	p := make([]int16, n)
	for i := range p {
		p[i] = int16(first + i)
	}
	return p
}

// TestInbox walks the queue through wrap-around, Finalize and
// SpeechStarted marks, drops and close.
// Mutations caught: take crossing a mark, a mark consumed early or twice
// or reported as the other kind, two starts in a row not made one, a
// wrapped copy in the wrong order, a partial chunk kept when it does not
// fit, drops not counted, input accepted after close.
func TestInbox(t *testing.T) {
	type step struct {
		put      int  // samples to put (ramp continues), 0: none
		start    bool // SpeechStarted after the put
		finalize bool // Finalize after the put (and start)
		take     int  // dst size, 0: no take
		wantN    int
		wantMark markKind
	}
	cases := []struct {
		name        string
		ring        int
		steps       []step
		wantDropped uint64
	}{
		{name: "plain", ring: 10, steps: []step{{put: 4, take: 10, wantN: 4}}},
		{name: "take in parts", ring: 10, steps: []step{{put: 7, take: 3, wantN: 3}, {take: 3, wantN: 3}, {take: 3, wantN: 1}, {take: 3, wantN: 0}}},
		{name: "stop at the mark", ring: 10, steps: []step{{put: 4, finalize: true}, {put: 3, take: 10, wantN: 4, wantMark: finalMark}, {take: 10, wantN: 3}}},
		{name: "mark on an empty queue", ring: 10, steps: []step{{finalize: true, take: 5, wantN: 0, wantMark: finalMark}, {take: 5, wantN: 0}}},
		{name: "two marks at one place", ring: 10, steps: []step{{put: 2, finalize: true}, {finalize: true, take: 5, wantN: 2, wantMark: finalMark}, {take: 5, wantN: 0, wantMark: finalMark}, {take: 5}}},
		{name: "mark reached in two takes", ring: 10, steps: []step{{put: 6, finalize: true, take: 4, wantN: 4}, {take: 4, wantN: 2, wantMark: finalMark}}},
		{name: "start mark", ring: 10, steps: []step{{put: 3, start: true}, {put: 4, take: 10, wantN: 3, wantMark: startMark}, {take: 10, wantN: 4}}},
		{name: "two starts are one", ring: 10, steps: []step{{put: 2, start: true}, {put: 2, start: true, take: 10, wantN: 2, wantMark: startMark}, {take: 10, wantN: 2}, {take: 10}}},
		{name: "start, finalize, start", ring: 10, steps: []step{{put: 2, start: true, finalize: true}, {start: true, take: 10, wantN: 2, wantMark: startMark}, {take: 10, wantMark: finalMark}, {take: 10, wantMark: startMark}, {take: 10}}},
		{name: "wrap around", ring: 8, steps: []step{{put: 6, take: 5, wantN: 5}, {put: 6, take: 8, wantN: 7}}},
		{name: "full chunk dropped whole", ring: 8, steps: []step{{put: 6}, {put: 3}, {take: 8, wantN: 6}}, wantDropped: 3},
		{name: "exact fit", ring: 8, steps: []step{{put: 5}, {put: 3, take: 8, wantN: 8}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newInbox(c.ring)
			next, want := 0, 0 // next value put, next value expected out
			for i, s := range c.steps {
				if s.put > 0 {
					if err := b.put(ramp(next, s.put)); err != nil {
						t.Fatal(err)
					}
					if s.put <= c.ring {
						next += s.put
					}
				}
				if s.start {
					if err := b.start(); err != nil {
						t.Fatal(err)
					}
				}
				if s.finalize {
					if err := b.finalize(); err != nil {
						t.Fatal(err)
					}
				}
				if s.take == 0 {
					continue
				}
				dst := make([]int16, s.take)
				n, m := b.take(dst)
				if n != s.wantN || m != s.wantMark {
					t.Fatalf("step %d: take = %d, %v; want %d, %v", i, n, m, s.wantN, s.wantMark)
				}
				for j := range n {
					if dst[j] != int16(want) {
						t.Fatalf("step %d: sample %d is %d, want %d", i, j, dst[j], want)
					}
					want++
				}
			}
			if got := b.droppedSamples(); got != c.wantDropped {
				t.Errorf("dropped %d, want %d", got, c.wantDropped)
			}
		})
	}
}

// TestInboxClosedAndBounded: after close both calls fail with
// providers.ErrClosed; more than MaxPendingFinalizes pending marks are
// refused. Mutation caught: the closed flag ignored, marks growing
// without bound.
func TestInboxClosedAndBounded(t *testing.T) {
	b := newInbox(16)
	for i := range MaxPendingFinalizes {
		if err := b.finalize(); err != nil {
			t.Fatalf("finalize %d: %v", i, err)
		}
	}
	if err := b.finalize(); !errors.Is(err, ErrTooManyFinalizes) {
		t.Errorf("finalize %d: %v, want ErrTooManyFinalizes", MaxPendingFinalizes+1, err)
	}
	b.close()
	if err := b.put(ramp(0, 3)); !errors.Is(err, providers.ErrClosed) {
		t.Errorf("put after close: %v", err)
	}
	if err := b.finalize(); !errors.Is(err, providers.ErrClosed) {
		t.Errorf("finalize after close: %v", err)
	}
	if err := b.start(); !errors.Is(err, providers.ErrClosed) {
		t.Errorf("start after close: %v", err)
	}
}

// TestSendAudioAllocs pins SendAudio's queueing at zero allocations
// (the ring is made once per session). Mutation caught: a copy of each
// chunk into a fresh slice (a channel of []int16, say).
func TestSendAudioAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := newInbox(16000)
	pcm := ramp(0, frame)
	dst := make([]int16, frame)
	if a := testing.AllocsPerRun(200, func() {
		_ = b.put(pcm)
		b.take(dst)
	}); a != 0 {
		t.Errorf("put+take: %v allocations, want 0", a)
	}
}

// FuzzInbox drives the queue with arbitrary puts, Finalize and
// SpeechStarted calls and takes, and checks it against a plain model:
// samples come out in order and whole, none are lost but the counted
// drops, a take never crosses a mark, every mark is reported exactly once
// at its position and as its kind, and a start right after a pending start
// is none. The op's top two bits choose put, finalize, start or take.
func FuzzInbox(f *testing.F) {
	f.Add([]byte{0x14, 0x80, 0x23, 0x05, 0xc1, 0x47})
	f.Add([]byte{0xff, 0xff, 0x80, 0x80, 0x01, 0x01, 0x01})
	f.Add([]byte{0x80, 0x80, 0x80, 0x3f, 0x3f, 0x3f, 0x3f})
	f.Add([]byte{0x10, 0x80, 0x08, 0x80, 0x41, 0xff, 0xc4, 0xff})
	f.Fuzz(func(t *testing.T, ops []byte) {
		const ring = 37
		b := newInbox(ring)
		type modelMark struct {
			at    int
			start bool
		}
		var queued []int // model: queued values
		var marks []modelMark
		finals := 0
		next, sent, taken := 0, 0, 0
		var dropped uint64
		for _, op := range ops {
			arg := int(op & 0x3f)
			switch op >> 6 {
			case 0: // put arg samples
				if err := b.put(ramp(next, arg)); err != nil {
					t.Fatal(err)
				}
				if arg > ring-len(queued) {
					dropped += uint64(arg)
					continue
				}
				for i := range arg {
					queued = append(queued, next+i)
				}
				next += arg
				sent += arg
			case 1: // finalize
				err := b.finalize()
				if finals == MaxPendingFinalizes {
					if !errors.Is(err, ErrTooManyFinalizes) {
						t.Fatalf("finalize over the bound: %v", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				marks = append(marks, modelMark{at: sent})
				finals++
			case 2: // SpeechStarted; a start after a pending start is none
				if err := b.start(); err != nil {
					t.Fatal(err)
				}
				if len(marks) == 0 || !marks[len(marks)-1].start {
					marks = append(marks, modelMark{at: sent, start: true})
				}
			default: // take into arg slots
				dst := make([]int16, arg)
				n, m := b.take(dst)
				limit := len(queued)
				if len(marks) > 0 {
					limit = min(limit, marks[0].at-taken)
				}
				if wantN := min(limit, arg); n != wantN {
					t.Fatalf("take(%d) = %d, want %d", arg, n, wantN)
				}
				for i := range n {
					if dst[i] != int16(queued[i]) {
						t.Fatalf("take: sample %d is %d, want %d", i, dst[i], int16(queued[i]))
					}
				}
				queued = queued[n:]
				taken += n
				want := noMark
				if len(marks) > 0 && marks[0].at == taken {
					want = finalMark
					if marks[0].start {
						want = startMark
					} else {
						finals--
					}
					marks = marks[1:]
				}
				if m != want {
					t.Fatalf("take: mark %v, want %v (taken %d, marks %v)", m, want, taken, marks)
				}
			}
		}
		if got := b.droppedSamples(); got != dropped {
			t.Fatalf("dropped %d, want %d", got, dropped)
		}
	})
}
