package pacer

import (
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// TestWriteLogAllocs: noting a written frame, reading the notes into the
// book and trimming at an echo allocate nothing once the slices have
// grown: the notes' two slices take turns, the book's ring compacts in
// place. (Mutation seen failing: drain making a new slice each time — 1
// allocation a frame.)
func TestWriteLogAllocs(t *testing.T) {
	l := &writeLog{}
	b := newBook(&record{}, 0, 100*time.Millisecond)
	b.begin(1)
	f := messages.NewPooledOutput(8000, nil)
	f.Epoch = 1
	t0 := time.Unix(1000, 0)
	frame := 0
	step := func() {
		f.Offset = time.Duration(frame) * messages.FrameDuration
		at := t0.Add(f.Offset)
		l.note(f, at)
		l.drain(func(w written) { b.out(w.offset, w.at) })
		if frame%5 == 4 {
			b.echo(confirmName(1, f.Offset-40*time.Millisecond), at)
		}
		frame++
	}
	for range 1000 {
		step()
	}
	if n := testing.AllocsPerRun(1000, step); n != 0 {
		t.Fatalf("%v allocations a frame, want 0", n)
	}
	// The echoes say the caller plays 40 ms behind the writes.
	if got, want := b.playedBy(t0.Add(f.Offset)), f.Offset-40*time.Millisecond; got != want {
		t.Fatalf("played by the last write %v, want %v", got, want)
	}
}
