package recording

import (
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// The channels of a recording.
const (
	caller = 0 // left
	bot    = 1 // right
)

// Call is one call's recording and its tap.
type Call struct {
	r    *Recorder
	id   string
	key  string
	t0   time.Time
	rate [2]int
	pool [2]*sync.Pool
	w    *writer

	// mu guards the queue against Close: the taps hold it shared while
	// they place and offer a frame, Close takes it to close the queue.
	// The writer never takes it.
	mu     sync.RWMutex
	closed bool
	q      chan item
	// next is each channel's next slot; only that channel's tap (one
	// goroutine at a time) touches it, under mu shared.
	next [2]int64

	// paused stops the taps copying; the writer silences every slot that
	// overlaps a paused span (pauses counts the changes), so a frame
	// captured or sent just before a pause and played into it is silence
	// too.
	paused  atomic.Bool
	pauses  atomic.Uint64
	dropped atomic.Int64

	spanMu   sync.Mutex
	pausedAt time.Time
	spans    []records.Span
	over     bool // closed: Pause does nothing

	closeOnce sync.Once
	result    *records.Recording
}

var _ conn.Tap = (*Call)(nil)

// item is one frame for the writer: its channel, its slot (20 ms since
// the call began) and its samples at the channel's rate.
type item struct {
	ch   int
	slot int64
	buf  *[]int16
}

func newCall(r *Recorder, id, key string, t0 time.Time, f *os.File, box container, rate [2]int, fileRate int, res [2]*media.Resampler, pool [2]*sync.Pool) *Call {
	c := &Call{r: r, id: id, key: key, t0: t0, rate: rate, pool: pool, q: make(chan item, r.cfg.Queue)}
	c.w = newWriter(c, f, box, fileRate, res)
	return c
}

// Input is the tap of the caller's frames: placed by their capture time
// (f.Start, the clock the call's events use), copied, queued.
//
// A capture time more than a second ahead of the clock (a Conn's clock
// gone wrong) is replaced by the clock, so a bad Start cannot make the
// writer fill hours of silence.
func (c *Call) Input(f *messages.AudioFrame) {
	at, now := f.Start, time.Now()
	if at.IsZero() || at.Sub(now) > time.Second {
		at = now
	}
	c.put(caller, at, f.PCM)
}

// Output is the tap of the bot's frames as sent: placed by the time of
// the write, copied, queued.
func (c *Call) Output(f *messages.OutputAudio) {
	c.put(bot, time.Now(), f.PCM)
}

// put places a frame in its channel's next free slot, or later when the
// channel had nothing for a while (a gap by the clock: the bot silent),
// and offers a copy to the writer. A paused or dropped frame keeps its
// slot, so the writer fills it with silence and the channels stay lined
// up. It never blocks and, in the steady state, never allocates.
func (c *Call) put(ch int, at time.Time, pcm []int16) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return
	}
	slot := c.next[ch]
	if d := at.Sub(c.t0); d > 0 {
		slot = max(slot, int64(d/messages.FrameDuration))
	}
	c.next[ch] = slot + 1
	if c.paused.Load() {
		return
	}
	bp := c.pool[ch].Get().(*[]int16)
	clear((*bp)[copy(*bp, pcm):])
	select {
	case c.q <- item{ch: ch, slot: slot, buf: bp}:
	default:
		c.pool[ch].Put(bp)
		c.dropped.Add(1)
	}
}

// Queued is how many frames wait for the writer (a gauge: near the queue's
// size, the disk is not keeping up and frames will drop).
func (c *Call) Queued() int { return len(c.q) }

// Pause records silence on both channels from now until Resume.
func (c *Call) Pause() {
	c.spanMu.Lock()
	defer c.spanMu.Unlock()
	if c.paused.Load() || c.over {
		return
	}
	c.pausedAt = time.Now()
	c.paused.Store(true)
	c.pauses.Add(1)
}

// Resume ends a pause; the span goes into the recording's account.
func (c *Call) Resume() {
	c.spanMu.Lock()
	defer c.spanMu.Unlock()
	c.resumeLocked(time.Now())
}

func (c *Call) resumeLocked(now time.Time) {
	if !c.paused.Load() {
		return
	}
	c.paused.Store(false)
	c.spans = append(c.spans, records.Span{From: c.pausedAt, To: now})
	c.pauses.Add(1)
}

// pausedSlots appends the slots [from, to) that overlap a paused span to
// dst; an open pause runs to the end.
func (c *Call) pausedSlots(dst [][2]int64) [][2]int64 {
	c.spanMu.Lock()
	defer c.spanMu.Unlock()
	slot := func(t time.Time, up bool) int64 {
		d := max(t.Sub(c.t0), 0)
		n := int64(d / messages.FrameDuration)
		if up && d%messages.FrameDuration != 0 {
			n++
		}
		return n
	}
	for _, sp := range c.spans {
		dst = append(dst, [2]int64{slot(sp.From, false), slot(sp.To, true)})
	}
	if c.paused.Load() {
		dst = append(dst, [2]int64{slot(c.pausedAt, false), math.MaxInt64})
	}
	return dst
}

// Close stops the taps (later frames are ignored), lets the writer write
// what is queued, finalises the file's header, renames it to its key and
// returns the recording's account. Later calls return the same account.
// It returns nil when no file could be kept (the error is logged).
func (c *Call) Close() *records.Recording {
	c.closeOnce.Do(func() {
		c.spanMu.Lock()
		c.resumeLocked(time.Now())
		c.over = true
		spans := c.spans
		c.spanMu.Unlock()
		c.mu.Lock()
		c.closed = true
		c.w.endSlot = max(c.next[caller], c.next[bot])
		close(c.q)
		c.mu.Unlock()
		rec := <-c.w.done
		dropped := int(c.dropped.Load())
		if rec != nil {
			rec.Paused = spans
			rec.DroppedFrames += dropped
		}
		c.result = rec
		c.r.ended(c, dropped)
	})
	return c.result
}
