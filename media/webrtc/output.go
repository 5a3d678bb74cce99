package webrtc

import (
	"fmt"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media/opus"
	"github.com/brisvox/brisvox/messages"
	pionmedia "github.com/pion/webrtc/v4/pkg/media"
)

// Pacing of the output.
const (
	// prebufferWait: a talk spurt starts when two frames are queued, so
	// that every later frame has a whole frame time of slack against the
	// pacer's own scheduling jitter; a lone frame (a spurt of one, or the
	// pacer late with the second) goes after this long.
	prebufferWait = 2 * messages.FrameDuration
	// silenceTail is how many frames of silence after speech are encoded
	// by the call's encoder (its state settles on silence) before the
	// cached silence packet takes over.
	silenceTail = 5
	// maxMarks bounds the marks held behind queued audio.
	maxMarks = 1024
	// maxPacket is the Opus packet buffer (a 20 ms packet at 510 kbit/s is
	// 1275 bytes).
	maxPacket = 1500
)

// outItem is a queued frame of bot audio, or a mark (pcm nil).
type outItem struct {
	epoch messages.Epoch
	pcm   []int16
	mark  string
	at    time.Time // when the frame was queued
}

// outputPath is the bot's audio: WriteFrame queues a copy; the sender
// takes one frame per 20 ms slot, encodes it and writes it to the local
// track; marks echo when the frames before them have been sent. The
// encoder takes the frames at OutputRate: Opus codes any of its rates into
// the same 48 kHz stream, and an encoder fed 16 kHz audio neither
// resamples it nor analyses a band the audio cannot hold (about a third
// less time per frame than encoding the same audio upsampled to 48 kHz;
// docs/LATENCY.md).
type outputPath struct {
	mu      sync.Mutex
	items   []outItem
	frames  int
	marks   int
	talking bool // the last tick sent a frame of a spurt
	free    [][]int16
	onEcho  func(string)

	// Owned by the sender.
	enc     *opus.Encoder
	packet  []byte
	silence []int16
	// silencePkt is 20 ms of silence encoded once; quiet counts the
	// silent frames sent since the last audio.
	silencePkt []byte
	quiet      int
	echoes     []string
}

func (o *outputPath) init(cfg Config) error {
	app, _ := opusApplication(cfg.OpusApplication) // checked by Validate
	var err error
	o.enc, err = opus.NewEncoder(opus.EncoderConfig{SampleRate: cfg.OutputRate, Application: app, Complexity: cfg.OpusComplexity, Bitrate: cfg.OpusBitrate})
	if err != nil {
		return fmt.Errorf("webrtc: opus encoder: %w", err)
	}
	o.packet = make([]byte, maxPacket)
	o.silence = make([]int16, cfg.OutputRate/50)
	// The cached silence comes from an encoder of its own, fresh: its
	// first packet stands alone, as a decoder met in mid-stream needs.
	quietEnc, err := opus.NewEncoder(opus.EncoderConfig{SampleRate: cfg.OutputRate, Application: app, Complexity: cfg.OpusComplexity, Bitrate: cfg.OpusBitrate})
	if err != nil {
		return fmt.Errorf("webrtc: opus encoder: %w", err)
	}
	buf := make([]byte, maxPacket)
	k, err := quietEnc.Encode(o.silence, buf)
	if err != nil {
		return fmt.Errorf("webrtc: opus silence: %w", err)
	}
	o.silencePkt = buf[:k:k]
	return nil
}

// WriteFrame queues a copy of f for sending (see conn.Conn): it never
// blocks and keeps nothing of f. Beyond Config.OutputQueue frames the
// oldest queued frame is dropped and counted.
func (c *Call) WriteFrame(f *messages.OutputAudio) error {
	if c.ended() {
		return c.closedErr()
	}
	n := c.cfg.OutputRate / 50
	if len(f.PCM) != n || (f.Rate != 0 && f.Rate != c.cfg.OutputRate) {
		return fmt.Errorf("%w: %d samples at %d Hz, want %d at %d Hz", ErrFrameSize, len(f.PCM), f.Rate, n, c.cfg.OutputRate)
	}
	o := &c.out
	o.mu.Lock()
	var buf []int16
	if k := len(o.free); k > 0 {
		buf, o.free = o.free[k-1], o.free[:k-1]
	} else {
		buf = make([]int16, n)
	}
	copy(buf, f.PCM)
	var echoes []string
	if o.frames >= c.cfg.OutputQueue {
		o.dropOldestLocked()
		c.inc(cOutputDropped)
		echoes = o.leadingMarksLocked(nil)
	}
	o.items = append(o.items, outItem{epoch: f.Epoch, pcm: buf, at: time.Now()})
	o.frames++
	o.mu.Unlock()
	c.echo(echoes)
	return nil
}

// dropOldestLocked removes the oldest queued frame (marks stay in place).
func (o *outputPath) dropOldestLocked() {
	for i, it := range o.items {
		if it.pcm != nil {
			o.free = append(o.free, it.pcm)
			o.items = append(o.items[:i], o.items[i+1:]...)
			o.frames--
			return
		}
	}
}

// Clear drops the queued frames of epochs before epoch; marks stay, and
// echo as soon as no frame is ahead of them.
func (c *Call) Clear(epoch messages.Epoch) error {
	if c.ended() {
		return c.closedErr()
	}
	o := &c.out
	o.mu.Lock()
	kept := o.items[:0]
	for _, it := range o.items {
		if it.pcm != nil && it.epoch < epoch {
			o.free = append(o.free, it.pcm)
			o.frames--
			continue
		}
		kept = append(kept, it)
	}
	clear(o.items[len(kept):])
	o.items = kept
	if o.frames == 0 {
		o.talking = false // a cut spurt, not an underrun
	}
	echoes := o.leadingMarksLocked(nil)
	o.mu.Unlock()
	c.echo(echoes)
	return nil
}

// Mark asks for an echo of name once the frames written before it have
// been sent (at once when none is queued). Sent means handed to the
// network: the browser plays it after its jitter buffer, typically 20 to
// 80 ms later (see the package doc).
func (c *Call) Mark(name string) error {
	if c.ended() {
		return c.closedErr()
	}
	o := &c.out
	o.mu.Lock()
	if o.marks >= maxMarks {
		o.mu.Unlock()
		return fmt.Errorf("%w: %d marks are waiting already", ErrQueueFull, maxMarks)
	}
	o.items = append(o.items, outItem{mark: name})
	o.marks++
	echoes := o.leadingMarksLocked(nil)
	o.mu.Unlock()
	c.echo(echoes)
	return nil
}

// OnMarkEcho registers the function that receives the echoes (nil
// unregisters). It is called from the sender or from Mark and Clear; it
// must only send a message.
func (c *Call) OnMarkEcho(fn func(name string)) {
	c.out.mu.Lock()
	c.out.onEcho = fn
	c.out.mu.Unlock()
}

// leadingMarksLocked removes the marks at the head of the queue (no frame
// ahead of them) and appends their names to dst.
func (o *outputPath) leadingMarksLocked(dst []string) []string {
	i := 0
	for ; i < len(o.items) && o.items[i].pcm == nil; i++ {
		dst = append(dst, o.items[i].mark)
	}
	if i > 0 {
		o.marks -= i
		n := copy(o.items, o.items[i:])
		clear(o.items[n:])
		o.items = o.items[:n]
	}
	return dst
}

// takeLocked removes the frame at the head (after leading marks, which
// must have been taken) and returns its samples.
func (o *outputPath) takeLocked() []int16 {
	if len(o.items) == 0 {
		return nil
	}
	pcm := o.items[0].pcm
	n := copy(o.items, o.items[1:])
	clear(o.items[n:])
	o.items = o.items[:n]
	o.frames--
	return pcm
}

// echo hands names to the registered echo function.
func (c *Call) echo(names []string) {
	if len(names) == 0 {
		return
	}
	c.out.mu.Lock()
	fn := c.out.onEcho
	c.out.mu.Unlock()
	if fn == nil {
		return
	}
	for _, n := range names {
		fn(n)
	}
}

// outputTick sends one frame, on the media clock: the next queued frame,
// or silence (the stream never pauses, so the browser's jitter buffer
// keeps its timing and NAT bindings stay open). A talk spurt starts once
// two frames are queued (or one has waited prebufferWait); a spurt whose
// next frame is missing at its tick sends silence, counted.
func (c *Call) outputTick(now time.Time) {
	o := &c.out
	o.mu.Lock()
	var pcm []int16
	if o.frames > 0 && (o.talking || o.frames >= 2 || now.Sub(o.headAtLocked()) >= prebufferWait) {
		pcm = o.takeLocked()
	}
	underrun := o.talking && pcm == nil
	o.talking = pcm != nil
	o.mu.Unlock()
	if underrun {
		c.inc(cSendGaps)
	}
	c.sendFrame(pcm)
	o.mu.Lock()
	if pcm != nil {
		o.free = append(o.free, pcm)
	}
	o.echoes = o.leadingMarksLocked(o.echoes[:0])
	o.mu.Unlock()
	c.echo(o.echoes)
}

// OutputLead is how far the audio written to the call can be ahead of
// what has gone out on the wire: the talk-spurt prebuffer, up to two
// frames. The session adds it to the pacer's lead margin, so that a word
// still queued here at a barge-in is not taken as heard.
func (c *Call) OutputLead() time.Duration { return prebufferWait }

// headAtLocked is when the first queued frame was queued.
func (o *outputPath) headAtLocked() time.Time {
	for _, it := range o.items {
		if it.pcm != nil {
			return it.at
		}
	}
	return time.Time{}
}

// sendFrame encodes and writes one frame (nil: silence). A long silence
// goes out as the cached silence packet: an idle call costs no encoder
// run per frame (55-67 µs at complexity 5).
func (c *Call) sendFrame(pcm []int16) {
	o := &c.out
	var data []byte
	switch {
	case pcm != nil:
		o.quiet = 0
	case o.quiet >= silenceTail:
		data = o.silencePkt
		c.inc(cSilenceCached)
	default:
		o.quiet++
		pcm = o.silence
	}
	if data == nil {
		k, err := o.enc.Encode(pcm, o.packet)
		if err != nil {
			c.inc(cRTPErrors)
			return
		}
		data = o.packet[:k]
	}
	if err := c.track.WriteSample(pionmedia.Sample{Data: data, Duration: messages.FrameDuration}); err != nil {
		c.inc(cRTPErrors)
		return
	}
	c.inc(cRTPSent)
}
