package recording

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/media"
)

// window is how many slots (1 s) the writer holds before it writes the
// oldest: a frame of one channel may reach it that much after the other
// channel's frames of the same time (the two taps run on different
// goroutines) and still land in its slot. A frame later than that is
// silence in the file and counted late.
const window = 50

// wavHeader is the size of the RIFF/WAVE header with a 16-byte fmt chunk.
const wavHeader = 44

// errTooLong stops a recording at WAV's 4 GiB limit (6 h at 48 kHz).
var errTooLong = errors.New("recording: the file reached WAV's 4 GiB limit")

// writer is a call's writer goroutine: it lines the two channels up slot
// by slot and streams the file.
type writer struct {
	c        *Call
	f        *os.File
	cw       countWriter
	out      *bufio.Writer
	fileRate int
	box      container
	res      [2]*media.Resampler
	ring     [2][window]*[]int16
	silence  [2][]int16 // one slot of zeros at each channel's rate
	tmp      [2][]int16 // one slot of each channel at the file's rate
	base     int64      // the first slot not yet written
	hi       int64      // one past the highest slot received
	// endSlot is set by Close before it closes the queue: the taps'
	// slots, so a call ending in a pause or in silence keeps its length.
	endSlot int64
	// silent are the paused slots, reloaded when the call's pauses
	// change (pauses is the count it was loaded at).
	silent [][2]int64
	pauses uint64
	failed error
	// slots is how many slots the disk took whole (the length of a
	// file whose writes failed).
	slots  int64
	frames uint64
	late   int
	done   chan *records.Recording
}

// countWriter counts the bytes its writer took.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newWriter(c *Call, f *os.File, box container, fileRate int, res [2]*media.Resampler) *writer {
	w := &writer{c: c, f: f, box: box, fileRate: fileRate, res: res, done: make(chan *records.Recording, 1)}
	var dst io.Writer = f
	if c.r.wrap != nil {
		dst = c.r.wrap(f)
	}
	w.cw.w = dst
	w.out = bufio.NewWriterSize(&w.cw, 64<<10)
	for ch := range 2 {
		w.silence[ch] = make([]int16, c.rate[ch]/50)
		w.tmp[ch] = make([]int16, fileRate/50)
	}
	return w
}

func (w *writer) run() {
	w.write(w.box.begin())
	for it := range w.c.q {
		w.add(it)
	}
	for end := max(w.endSlot, w.hi); w.base < end; {
		w.emit()
	}
	w.done <- w.finish()
}

// add puts a frame in its slot, writing the slots that fall out of the
// window first.
func (w *writer) add(it item) {
	if it.slot < w.base {
		w.late++
		w.c.pool[it.ch].Put(it.buf)
		return
	}
	for it.slot >= w.base+window {
		w.emit()
	}
	w.ring[it.ch][it.slot%window] = it.buf
	w.hi = max(w.hi, it.slot+1)
}

// emit writes slot base: each channel's frame or silence, at the file's
// rate, interleaved.
func (w *writer) emit() {
	i := w.base % window
	for ch := range 2 {
		src := w.silence[ch]
		b := w.ring[ch][i]
		if b != nil {
			src = *b
		}
		if w.res[ch] != nil {
			// Every 20 ms in makes exactly 20 ms out (OutLen's contract
			// over a stream), so the channel stays on its slots.
			w.res[ch].Process(w.tmp[ch], src)
		} else {
			copy(w.tmp[ch], src)
		}
		if b != nil {
			w.ring[ch][i] = nil
			w.c.pool[ch].Put(b)
			w.frames++
		}
	}
	l, r := w.tmp[caller], w.tmp[bot]
	if w.paused(w.base) {
		clear(l)
		clear(r)
	}
	p, slots, err := w.box.slot(l, r)
	if err != nil && w.failed == nil {
		w.fail(err)
	}
	if w.write(p) {
		w.slots += int64(slots)
	}
	w.base++
}

// paused says whether slot overlaps a paused span.
func (w *writer) paused(slot int64) bool {
	if n := w.c.pauses.Load(); n != w.pauses {
		w.pauses = n
		w.silent = w.c.pausedSlots(w.silent[:0])
	}
	for _, sp := range w.silent {
		if slot >= sp[0] && slot < sp[1] {
			return true
		}
	}
	return false
}

// write streams p unless a write failed before: a full or broken disk
// ends the file where it was, the call goes on. It says whether p went.
func (w *writer) write(p []byte) bool {
	if w.failed != nil {
		return false
	}
	if w.cw.n+int64(w.out.Buffered())+int64(len(p)) > math.MaxUint32-36 {
		w.fail(errTooLong)
		return false
	}
	if _, err := w.out.Write(p); err != nil {
		w.fail(err)
		return false
	}
	return true
}

func (w *writer) fail(err error) {
	w.failed = err
	w.c.r.writeErrors.Add(1)
	w.c.r.log.Warn().Err(err).Str("call_id", w.c.id).Msg("recording: writing the call's audio failed; the rest of the call is not recorded")
}

// finish flushes, writes the header's real sizes, syncs, closes and
// renames the file, and makes the account. A file without a whole header
// is removed.
func (w *writer) finish() *records.Recording {
	r, c := w.c.r, w.c
	r.frames.Add(w.frames)
	r.late.Add(uint64(w.late))
	part := c.key + ".part"
	if p, n := w.box.end(); w.failed == nil && w.write(p) {
		w.slots += int64(n)
	}
	if w.failed == nil {
		if err := w.out.Flush(); err != nil {
			w.fail(err)
		}
	}
	size, durMS, ok, err := w.box.finish(w.f, w.cw.n, w.slots)
	if !ok {
		w.f.Close()
		r.root.Remove(part)
		r.log.Warn().Err(w.failed).Str("call_id", c.id).Msg("recording: nothing whole was written; the call's recording is removed")
		return nil
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.root.Rename(part, c.key)
	}
	if err != nil {
		r.writeErrors.Add(1)
		r.log.Warn().Err(err).Str("call_id", c.id).Msg("recording: finishing the call's file failed; it is left as .part")
		return nil
	}
	r.bytes.Add(uint64(size))
	return &records.Recording{
		Format:     c.r.cfg.Format,
		Key:        c.key,
		Bytes:      size,
		DurationMS: durMS,
		// Late frames are silence in the file too; Close adds the
		// queue's drops.
		DroppedFrames: w.late,
	}
}
