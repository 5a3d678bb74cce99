package pocketsphinx

import (
	"fmt"
	"sync"

	"github.com/brisvox/brisvox/providers"
)

// markKind is what a stream position marks: the end of an utterance asked
// by Finalize, or the start of speech told by SpeechStarted.
type markKind uint8

const (
	noMark    markKind = iota
	finalMark          // Finalize: end the utterance here
	startMark          // SpeechStarted: the caller speaks from here
)

// mark is a pending Finalize or SpeechStarted at a stream position.
type mark struct {
	at   uint64
	kind markKind
}

// inbox is a session's audio queue between SendAudio, Finalize and
// SpeechStarted (any goroutine) and the session's worker: a fixed ring of
// samples and the stream positions of the pending marks. Nothing is
// allocated after newInbox, and no call blocks on the worker.
type inbox struct {
	mu      sync.Mutex
	ring    []int16
	head    int    // ring index of the oldest queued sample
	n       int    // samples queued
	sent    uint64 // samples accepted since the session began
	taken   uint64 // samples handed to the worker
	marks   []mark // pending marks, by position (ties in call order)
	finals  int    // finalMarks among marks
	dropped uint64 // samples refused because the ring was full
	closed  bool

	// wake has one slot: "something arrived", for the worker's select.
	wake chan struct{}
}

func newInbox(samples int) *inbox {
	return &inbox{
		ring: make([]int16, samples),
		// Two starts in a row are one, so starts are at most finals+1.
		marks: make([]mark, 0, 2*MaxPendingFinalizes+1),
		wake:  make(chan struct{}, 1),
	}
}

// put copies pcm into the queue. A chunk that does not fit whole is
// dropped and counted, so the audio that is kept stays contiguous up to the
// drop.
func (b *inbox) put(pcm []int16) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("%w: SendAudio", providers.ErrClosed)
	}
	if len(pcm) == 0 {
		b.mu.Unlock()
		return nil
	}
	if len(pcm) > len(b.ring)-b.n {
		b.dropped += uint64(len(pcm))
		b.mu.Unlock()
		return nil
	}
	tail := (b.head + b.n) % len(b.ring)
	k := copy(b.ring[tail:], pcm)
	copy(b.ring, pcm[k:])
	b.n += len(pcm)
	b.sent += uint64(len(pcm))
	b.mu.Unlock()
	b.signal()
	return nil
}

// finalize marks the current end of the stream: the worker ends the
// utterance once it has decoded everything sent before.
func (b *inbox) finalize() error {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return fmt.Errorf("%w: Finalize", providers.ErrClosed)
	case b.finals == MaxPendingFinalizes:
		b.mu.Unlock()
		return fmt.Errorf("%w: %d waiting", ErrTooManyFinalizes, b.finals)
	}
	b.marks = append(b.marks, mark{at: b.sent, kind: finalMark})
	b.finals++
	b.mu.Unlock()
	b.signal()
	return nil
}

// start marks the current end of the stream as the start of speech. A
// start right after a start still pending adds nothing: the worker has
// not reached the first one yet, and from there it holds a decoder anyway.
func (b *inbox) start() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("%w: SpeechStarted", providers.ErrClosed)
	}
	if k := len(b.marks); k > 0 && b.marks[k-1].kind == startMark {
		b.mu.Unlock()
		return nil
	}
	b.marks = append(b.marks, mark{at: b.sent, kind: startMark})
	b.mu.Unlock()
	b.signal()
	return nil
}

func (b *inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take moves up to len(dst) queued samples into dst, never past the next
// mark. m is the mark the samples taken end at (it is then consumed), or
// noMark. n == 0 && m == noMark: nothing to do.
func (b *inbox) take(dst []int16) (n int, m markKind) {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.n
	if len(b.marks) > 0 {
		limit = min(limit, int(b.marks[0].at-b.taken))
	}
	n = min(limit, len(dst))
	k := copy(dst[:n], b.ring[b.head:])
	copy(dst[k:n], b.ring)
	b.head = (b.head + n) % len(b.ring)
	b.n -= n
	b.taken += uint64(n)
	if len(b.marks) > 0 && b.marks[0].at == b.taken {
		m = b.marks[0].kind
		copy(b.marks, b.marks[1:])
		b.marks = b.marks[:len(b.marks)-1]
		if m == finalMark {
			b.finals--
		}
	}
	return n, m
}

// close refuses all later input.
func (b *inbox) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
}

// droppedSamples is how many samples were refused for want of room.
func (b *inbox) droppedSamples() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}
