package webrtc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/opus"
	"github.com/brisvox/brisvox/messages"
	pion "github.com/pion/webrtc/v4"
)

// Sizes of the input path.
const (
	// maxDecodedMS is the longest Opus packet (120 ms).
	maxDecodedMS = 120
	// maxRTPBytes is the largest RTP packet read from the track.
	maxRTPBytes = 1500
)

// inputPath is the caller's audio: the RTP reader pushes packets into the
// jitter buffer; the playout clock pops one per 20 ms, decodes (or
// conceals) it at InputRate and queues the frame for ReadFrame. The
// decoder produces InputRate itself: Opus decodes any stream at any of its
// rates, cheaper than decoding at 48 kHz and resampling.
type inputPath struct {
	// mu guards jb, shared by the RTP reader (Push) and the playout clock
	// (Pop).
	mu sync.Mutex
	jb *media.JitterBuffer
	// lastRTP is when the last RTP packet of the caller came (unix ns;
	// the connection's time until the first): the media clock ends the
	// call after MediaTimeout without one.
	lastRTP atomic.Int64

	// Owned by the playout clock.
	dec     *opus.Decoder
	payload [maxRTPBytes]byte
	decoded []int16
	fifo    []int16 // decoded audio not yet played (InputRate), len = held
	frame   int     // samples of 20 ms at InputRate
	// dtx: the last packet played was a DTX packet (a TOC byte and no
	// audio: the caller's encoder stopped sending for silence). Until the
	// next packet the missing frames are its pause, not losses: they play
	// as silence without a decoder run.
	dtx bool

	// The frames waiting for ReadFrame, a ring guarded by rmu.
	rmu    sync.Mutex
	ring   [][]int16
	starts []time.Time
	seqs   []uint64
	head   int
	count  int
	seq    uint64
	ready  chan struct{}
}

func (in *inputPath) init(cfg Config) error {
	var err error
	if in.dec, err = opus.NewDecoder(opus.DecoderConfig{SampleRate: cfg.InputRate}); err != nil {
		return fmt.Errorf("webrtc: opus decoder: %w", err)
	}
	n := cfg.InputRate / 50
	maxDecoded := cfg.InputRate * maxDecodedMS / 1000
	in.frame = n
	in.decoded = make([]int16, maxDecoded)
	// The FIFO holds a longest packet's audio plus two frames.
	in.fifo = make([]int16, 0, maxDecoded+2*n)
	backing := make([]int16, cfg.InputQueue*n)
	in.ring = make([][]int16, cfg.InputQueue)
	for i := range in.ring {
		in.ring[i] = backing[i*n : (i+1)*n : (i+1)*n]
	}
	in.starts = make([]time.Time, cfg.InputQueue)
	in.seqs = make([]uint64, cfg.InputQueue)
	in.ready = make(chan struct{}, 1)
	return nil
}

// readTrack moves the caller's RTP packets into the jitter buffer until
// the track ends (the peer connection closed). Pion hands over only
// packets that came from the ICE-validated remote address and passed SRTP
// authentication (see the package doc).
func (c *Call) readTrack(t *pion.TrackRemote) {
	buf := make([]byte, maxRTPBytes)
	for {
		n, _, err := t.Read(buf)
		if err != nil {
			return
		}
		now := time.Now()
		c.in.lastRTP.Store(now.UnixNano())
		c.in.mu.Lock()
		err = c.in.jb.Push(buf[:n], now)
		c.in.mu.Unlock()
		if err != nil {
			c.inc(cRTPErrors)
		} else {
			c.inc(cRTPPackets)
		}
	}
}

// inputTick plays out one frame: what the jitter buffer has due, decoded,
// or concealment, or silence while buffering.
func (c *Call) inputTick(now time.Time) {
	in := &c.in
	st := media.PopStatus{Kind: media.PopBuffering}
	n := 0
	in.mu.Lock()
	if in.jb != nil {
		var p []byte
		p, st = in.jb.Pop(now)
		n = copy(in.payload[:], p)
	}
	in.mu.Unlock()
	switch st.Kind {
	case media.PopFrame:
		if n == 1 {
			// A DTX packet (RFC 6716 3.1: a TOC byte, a frame of no
			// bytes): libopus would conceal it, a whole decoder run for
			// comfort noise; the engine hears silence.
			in.dtx = true
			c.inc(cInputDTX)
			break
		}
		in.dtx = false
		k, err := in.dec.Decode(in.payload[:n], in.decoded)
		if err != nil {
			c.inc(cRTPErrors)
			k, err = in.dec.Conceal(in.decoded)
			if err != nil {
				k = 0
			}
		}
		in.push(in.decoded[:k])
	case media.PopLost:
		if in.dtx {
			c.inc(cInputDTX)
			break
		}
		if len(in.fifo) < in.frame {
			if k, err := in.dec.Conceal(in.decoded); err == nil {
				in.push(in.decoded[:k])
			}
		}
	}
	c.play(now)
}

// push appends decoded audio, dropping the oldest beyond the FIFO.
func (in *inputPath) push(pcm []int16) {
	if over := len(in.fifo) + len(pcm) - cap(in.fifo); over > 0 {
		// len(pcm) <= the longest packet < cap, so over <= len(in.fifo).
		in.fifo = in.fifo[:copy(in.fifo, in.fifo[over:])]
	}
	in.fifo = append(in.fifo, pcm...)
}

// play takes 20 ms from the FIFO (silence for what is missing) and
// queues the frame for ReadFrame.
func (c *Call) play(now time.Time) {
	in := &c.in
	in.rmu.Lock()
	if in.count == len(in.ring) {
		// ReadFrame is behind by the whole queue: drop the oldest.
		in.head = (in.head + 1) % len(in.ring)
		in.count--
		c.inc(cInputDropped)
	}
	i := (in.head + in.count) % len(in.ring)
	slot := in.ring[i]
	k := copy(slot, in.fifo)
	clear(slot[k:])
	in.fifo = in.fifo[:copy(in.fifo, in.fifo[k:])]
	in.starts[i] = now.Add(-messages.FrameDuration)
	in.seqs[i] = in.seq
	in.seq++
	in.count++
	in.rmu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// ReadFrame waits for the next 20 ms of the caller's audio (see
// conn.Conn): frames come once the call is connected, silence until
// the caller's first packets have filled the jitter buffer. After the call
// ended it returns conn.ErrClosed wrapping the reason.
func (c *Call) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	in := &c.in
	want := c.cfg.InputRate / 50
	for {
		if c.ended() {
			return c.closedErr()
		}
		in.rmu.Lock()
		if in.count > 0 {
			if cap(f.PCM) < want {
				f.PCM = make([]int16, want)
			}
			f.PCM = f.PCM[:want]
			copy(f.PCM, in.ring[in.head])
			f.Start, f.Seq, f.Rate = in.starts[in.head], in.seqs[in.head], c.cfg.InputRate
			in.head = (in.head + 1) % len(in.ring)
			in.count--
			in.rmu.Unlock()
			return nil
		}
		in.rmu.Unlock()
		select {
		case <-in.ready:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
		}
	}
}
