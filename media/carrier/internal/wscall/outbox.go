package wscall

import (
	"fmt"
	"sync"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// Kind tells outbound messages apart.
type Kind uint8

// The kinds of outbound messages.
const (
	KindAudio Kind = iota + 1
	KindMark
	KindClear
	KindText
)

// Item is one encoded outbound message.
type Item struct {
	Kind  Kind
	Type  websocket.MessageType
	Epoch messages.Epoch // audio
	mark  uint64         // mark: its id in the book
	Buf   []byte
}

// pendingMark is a mark asked for and not echoed yet.
type pendingMark struct {
	id      uint64
	name    string
	sent    bool // handed to the writer
	cleared bool // a clear went out after it: its echo is no playback
}

// Outbox is the bounded queue of encoded messages of one call, in wire
// order, and the book of marks waiting for their echo. The producers
// (WriteFrame, Mark, Clear, Publish) encode into a buffer from the
// outbox's free list; the writer hands back the buffer of the message it
// wrote, so in a steady state nothing is allocated. Only queued messages
// hold buffers (a free slot holds none): a call keeps as many as were
// ever queued at once, plus the writer's, not one per slot of the ring
// (the ring cycles through all its slots, so per slot it was about 64 KiB
// of 640-byte frames a call).
//
// Marks and clear: a mark is echoed by the peer once the audio before it
// has played. A clear makes the peer drop the audio it holds and (Twilio
// does this) echo at once the marks it still had: those echoes confirm
// nothing, so the book flags every mark sent before the clear as cleared
// and swallows its echo (counted "marks_cleared"). Marks still queued
// here when the clear comes are dropped with the audio before them, and
// never echoed either.
type Outbox struct {
	stats    *Counters
	wake     chan struct{}
	maxMarks int
	// onFull, when set, is called (under the lock) when a message is
	// refused for a full queue: the core ends the call then, since a
	// backlog that large means the peer does not read. It must not call
	// back into the outbox.
	onFull func()

	mu       sync.Mutex
	slots    []Item
	head, n  int
	minEpoch messages.Epoch
	closed   bool
	pending  []pendingMark
	nextMark uint64
	// free are the buffers of messages written or dropped, for reuse.
	free [][]byte
}

// NewOutbox makes an outbox of capItems messages that keeps at most
// maxMarks marks waiting for their echo.
func NewOutbox(capItems, maxMarks int, stats *Counters) *Outbox {
	return &Outbox{
		stats: stats, wake: make(chan struct{}, 1), maxMarks: maxMarks,
		slots: make([]Item, capItems),
	}
}

// Wake is signalled after a message is queued.
func (o *Outbox) Wake() <-chan struct{} { return o.wake }

func (o *Outbox) closedErr() error {
	return fmt.Errorf("%w: the call is over", conn.ErrClosed)
}

// pushLocked claims the tail slot and lets encode fill its buffer.
func (o *Outbox) pushLocked(it Item, encode func(dst []byte) []byte) error {
	if o.closed {
		return o.closedErr()
	}
	if o.n == len(o.slots) {
		o.stats.Inc("out_full")
		if o.onFull != nil {
			o.onFull()
		}
		return fmt.Errorf("%w: %d messages", ErrQueueFull, o.n)
	}
	i := (o.head + o.n) % len(o.slots)
	it.Buf = encode(o.takeLocked())
	o.slots[i] = it
	o.n++
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

// Audio queues audio of epoch. Audio of an epoch a clear dropped is not
// queued: ErrStale (counted "stale_frames").
func (o *Outbox) Audio(typ websocket.MessageType, epoch messages.Epoch, encode func(dst []byte) []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed && epoch < o.minEpoch {
		o.stats.Inc("stale_frames")
		return fmt.Errorf("%w: epoch %d before %d", ErrStale, epoch, o.minEpoch)
	}
	return o.pushLocked(Item{Kind: KindAudio, Type: typ, Epoch: epoch}, encode)
}

// Text queues a control or event message.
func (o *Outbox) Text(encode func(dst []byte) []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pushLocked(Item{Kind: KindText, Type: websocket.MessageText}, encode)
}

// Mark queues a mark named name after the audio queued so far and books
// it for its echo. When more than maxMarks wait, the oldest is forgotten
// (counted "marks_unechoed"); its echo, should it come, is unexpected.
func (o *Outbox) Mark(name string, encode func(dst []byte) []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.nextMark++
	id := o.nextMark
	if err := o.pushLocked(Item{Kind: KindMark, Type: websocket.MessageText, mark: id}, encode); err != nil {
		return err
	}
	if len(o.pending) > 0 && len(o.pending) >= o.maxMarks {
		o.pending = append(o.pending[:0], o.pending[1:]...)
		o.stats.Inc("marks_unechoed")
	}
	o.pending = append(o.pending, pendingMark{id: id, name: name})
	o.stats.Inc("marks")
	return nil
}

// Clear drops the queued audio of epochs before epoch and the queued
// marks, flags the marks already sent as cleared, and queues the clear
// message ahead of what is left (audio of epoch or later).
func (o *Outbox) Clear(epoch messages.Epoch, encode func(dst []byte) []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return o.closedErr()
	}
	o.minEpoch = max(o.minEpoch, epoch)
	// Compact the ring in place, keeping newer audio and text in order.
	kept := 0
	for k := range o.n {
		it := o.slots[(o.head+k)%len(o.slots)]
		drop := (it.Kind == KindAudio && it.Epoch < epoch) || it.Kind == KindMark
		if drop {
			if it.Kind == KindAudio {
				o.stats.Inc("cleared_frames")
			} else {
				o.forgetLocked(it.mark)
			}
			// Keep the buffer for reuse; the slot holds none.
			o.putLocked(it.Buf)
			o.slots[(o.head+k)%len(o.slots)] = Item{}
			continue
		}
		j := (o.head + kept) % len(o.slots)
		i := (o.head + k) % len(o.slots)
		o.slots[i], o.slots[j] = o.slots[j], o.slots[i]
		kept++
	}
	o.n = kept
	for i := range o.pending {
		if o.pending[i].sent {
			o.pending[i].cleared = true
		}
	}
	// The clear goes first: it must not throw away the audio kept.
	if o.n == len(o.slots) {
		o.stats.Inc("out_full")
		if o.onFull != nil {
			o.onFull()
		}
		return fmt.Errorf("%w: %d messages", ErrQueueFull, o.n)
	}
	o.head = (o.head - 1 + len(o.slots)) % len(o.slots)
	o.slots[o.head] = Item{Kind: KindClear, Type: websocket.MessageText, Buf: encode(o.takeLocked())}
	o.n++
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return nil
}

// takeLocked gives a buffer for a message: a free one, or nil (encode's
// append then makes one).
func (o *Outbox) takeLocked() []byte {
	if n := len(o.free); n > 0 {
		b := o.free[n-1]
		o.free[n-1] = nil
		o.free = o.free[:n-1]
		return b[:0]
	}
	return nil
}

// putLocked keeps b for reuse. There are never more buffers than slots
// plus the writer's, so the free list is bounded by the ring.
func (o *Outbox) putLocked(b []byte) {
	if cap(b) > 0 && len(o.free) <= len(o.slots) {
		o.free = append(o.free, b[:0])
	}
}

// forgetLocked removes the mark id from the book (dropped before it was
// sent, so no echo can come).
func (o *Outbox) forgetLocked(id uint64) {
	for i := range o.pending {
		if o.pending[i].id == id {
			o.pending = append(o.pending[:i], o.pending[i+1:]...)
			o.stats.Inc("marks_cleared")
			return
		}
	}
}

// Pop takes the next message for the writer, giving spare (the buffer of
// the message it wrote before) to the freed slot. ok is false when the
// queue is empty.
func (o *Outbox) Pop(spare []byte) (it Item, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 {
		return Item{}, false
	}
	it = o.slots[o.head]
	o.slots[o.head] = Item{}
	o.putLocked(spare)
	o.head = (o.head + 1) % len(o.slots)
	o.n--
	if it.Kind == KindMark {
		for i := range o.pending {
			if o.pending[i].id == it.mark {
				o.pending[i].sent = true
				break
			}
		}
	}
	return it, true
}

// Echo books the peer's echo of name. It returns true when the echo
// confirms playback: the oldest mark of that name that was sent and not
// cleared. An echo of a cleared mark is swallowed ("marks_cleared"), an
// echo of a mark never sent or not known is counted
// ("unexpected_mark_echoes").
func (o *Outbox) Echo(name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range o.pending {
		p := o.pending[i]
		if p.name != name || !p.sent {
			continue
		}
		o.pending = append(o.pending[:i], o.pending[i+1:]...)
		if p.cleared {
			o.stats.Inc("marks_cleared")
			return false
		}
		o.stats.Inc("mark_echoes")
		return true
	}
	o.stats.Inc("unexpected_mark_echoes")
	return false
}

// Pending is the number of marks waiting for their echo.
func (o *Outbox) Pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.pending)
}

// Close makes every later call fail with a wrapped conn.ErrClosed
// and drops what is queued.
func (o *Outbox) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.n = 0
}
