package wscall

import (
	"context"
	"sync"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// Inbox turns the caller's audio, in chunks of any length, into 20 ms
// frames for ReadFrame. It keeps a timeline: every frame has the index of
// its place in the call (Seq), so a frame's Start is the call's start plus
// Seq x 20 ms. Silence fills a gap the carrier reports (Silence) so the
// timeline stays true. When the reader falls behind, the oldest frames
// are dropped (counted "in_dropped"); the Seq of the next frame read then
// jumps by the frames lost.
//
// One goroutine pushes (the call's reader) and one reads (the transport
// actor's reader); both may be called concurrently with Close.
type Inbox struct {
	rate  int
	spf   int // samples per frame
	stats *Counters
	wake  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	partial []int16 // the frame being filled
	fill    int
	ring    []int16 // cap frames of spf samples
	seqs    []uint64
	head, n int
	next    uint64    // Seq of the frame being filled
	t0      time.Time // Start of frame 0; zero until the first audio
	err     error     // the end, once closed
}

// NewInbox makes an inbox of frames at rate that holds up to capFrames
// frames.
func NewInbox(rate, capFrames int, stats *Counters) *Inbox {
	spf := rate / 50
	return &Inbox{
		rate: rate, spf: spf, stats: stats,
		wake:    make(chan struct{}, 1),
		done:    make(chan struct{}),
		partial: make([]int16, spf),
		ring:    make([]int16, spf*capFrames),
		seqs:    make([]uint64, capFrames),
	}
}

// SamplesPerFrame is rate/50.
func (b *Inbox) SamplesPerFrame() int { return b.spf }

// Position is the number of samples of the timeline so far (pushed audio
// and silence, dropped frames included).
func (b *Inbox) Position() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next*uint64(b.spf) + uint64(b.fill)
}

// Push appends samples of the caller's audio.
func (b *Inbox) Push(pcm []int16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil || len(pcm) == 0 {
		return
	}
	b.startLocked(len(pcm))
	for len(pcm) > 0 {
		k := copy(b.partial[b.fill:], pcm)
		b.fill += k
		pcm = pcm[k:]
		if b.fill == b.spf {
			b.emitLocked()
		}
	}
}

// PushFunc appends n samples that decode writes into the slice it is
// given (possibly in several calls, each with the next part): the caller
// decodes straight into the frame being filled, without a buffer of its
// own. decode must fill all of dst.
func (b *Inbox) PushFunc(n int, decode func(dst []int16, from int)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil || n <= 0 {
		return
	}
	b.startLocked(n)
	for from := 0; from < n; {
		k := min(b.spf-b.fill, n-from)
		decode(b.partial[b.fill:b.fill+k], from)
		b.fill += k
		from += k
		if b.fill == b.spf {
			b.emitLocked()
		}
	}
}

// Silence appends n samples of silence for a gap. A gap longer than the
// inbox holds advances the timeline without making the frames that would
// be dropped anyway (counted "gap_frames" either way).
func (b *Inbox) Silence(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil || n <= 0 || b.t0.IsZero() {
		return
	}
	before := b.next
	if b.fill > 0 {
		k := min(n, b.spf-b.fill)
		clear(b.partial[b.fill : b.fill+k])
		b.fill += k
		n -= k
		if b.fill == b.spf {
			b.emitLocked()
		}
	}
	whole := n / b.spf
	if skip := whole - len(b.seqs); skip > 0 {
		// Frames that would push everything out: the timeline advances,
		// the queue is replaced by the last capFrames of silence.
		b.stats.Add("in_dropped", uint64(skip))
		b.next += uint64(skip)
		whole -= skip
	}
	clear(b.partial)
	for range whole {
		b.emitLocked()
	}
	b.fill = n % b.spf
	b.stats.Add("gap_frames", b.next-before)
}

func (b *Inbox) startLocked(n int) {
	if b.t0.IsZero() {
		// The first chunk's capture ended when it arrived.
		b.t0 = time.Now().Add(-time.Duration(n) * time.Second / time.Duration(b.rate))
	}
}

// emitLocked queues the full partial frame, dropping the oldest queued
// frame when the queue is full.
func (b *Inbox) emitLocked() {
	if b.n == len(b.seqs) {
		b.head = (b.head + 1) % len(b.seqs)
		b.n--
		b.stats.Inc("in_dropped")
	}
	i := (b.head + b.n) % len(b.seqs)
	copy(b.ring[i*b.spf:(i+1)*b.spf], b.partial)
	b.seqs[i] = b.next
	b.next++
	b.n++
	b.fill = 0
	b.stats.Inc("frames_in")
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Close ends the inbox with err (the first call wins): the partial frame
// is padded with silence and queued, ReadFrame returns the queued frames
// and then err.
func (b *Inbox) Close(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return
	}
	if b.fill > 0 {
		clear(b.partial[b.fill:])
		b.emitLocked()
	}
	b.err = err
	close(b.done)
}

// Err is the error Close was given (nil while open).
func (b *Inbox) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// ReadFrame waits for the next frame and copies it into f (Seq, Rate,
// Start, PCM), until ctx ends or the inbox is closed and drained.
func (b *Inbox) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	for {
		b.mu.Lock()
		if b.n > 0 {
			i := b.head
			copy(f.PCM, b.ring[i*b.spf:(i+1)*b.spf])
			f.Seq = b.seqs[i]
			f.Rate = b.rate
			f.Start = b.t0.Add(time.Duration(f.Seq) * messages.FrameDuration)
			b.head = (b.head + 1) % len(b.seqs)
			b.n--
			b.mu.Unlock()
			return nil
		}
		err := b.err
		b.mu.Unlock()
		if err != nil {
			return err
		}
		select {
		case <-b.wake:
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
