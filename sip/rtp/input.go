package rtp

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
)

// inputPath is the caller's audio: the readers hand datagrams to the
// inbound state (latch, demux, jitter buffer); the playout clock pops one
// packet time at a time, decodes or conceals it (silence while buffering,
// for comfort noise and for sender pauses), converts it to InputRate and
// queues 20 ms frames for ReadFrame.
type inputPath struct {
	// cmu guards the codec state (the clock decodes, Update swaps); it is
	// taken before mu.
	cmu sync.Mutex
	dec decoder
	rs  *media.Resampler // nil when the decode rate is InputRate
	// Owned by the clock under cmu.
	payload   [maxDatagram]byte
	line      []int16 // decoded audio at the decode rate
	resampled []int16
	fifo      []int16 // audio at InputRate not yet framed
	fifoStart time.Time
	frame     int

	// mu guards st, which the readers and the clock share.
	mu sync.Mutex
	st inbound

	// The frames waiting for ReadFrame, a ring guarded by rmu.
	rmu    sync.Mutex
	ring   [][]int16
	starts []time.Time
	head   int
	count  int
	seq    uint64
	ready  chan struct{}
	stats  *counters
}

func (in *inputPath) init(cfg Config, stats *counters) {
	n := cfg.InputRate / 50
	in.frame = n
	in.stats = stats
	in.line = make([]int16, maxLineSamples(cfg.InputRate))
	// The resampler only runs for G.711 and G.722 (8 or 16 kHz lines).
	in.resampled = make([]int16, cfg.InputRate*maxDecodeMS/1000+resampleSlack)
	in.fifo = make([]int16, 0, cfg.InputRate*maxDecodeMS/1000+2*n)
	backing := make([]int16, cfg.InputQueue*n)
	in.ring = make([][]int16, cfg.InputQueue)
	for i := range in.ring {
		in.ring[i] = backing[i*n : (i+1)*n : (i+1)*n]
	}
	in.starts = make([]time.Time, cfg.InputQueue)
	in.ready = make(chan struct{}, 1)
	in.st = inbound{
		latch:   newLatch(cfg.LatchRun, cfg.Candidates, cfg.SymmetricRTP),
		onEvent: cfg.OnEvent,
		stats:   stats,
	}
}

// maxStartDrift is how far the frames' starts may drift from the clock
// before they follow it again.
const maxStartDrift = 5 * messages.FrameDuration

// configure swaps in p's decoder and resampler and resets the inbound
// state (a new jitter buffer, learning again).
func (in *inputPath) configure(p Params, cfg Config, dec decoder, now time.Time) error {
	var rs *media.Resampler
	if dec.rate() != cfg.InputRate {
		var err error
		if rs, err = media.NewResampler(dec.rate(), cfg.InputRate, media.ResamplerConfig{}); err != nil {
			return err
		}
	}
	in.cmu.Lock()
	defer in.cmu.Unlock()
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.st.configure(p, cfg.Jitter, dec.samples, now); err != nil {
		return err
	}
	in.st.ourClock = p.ClockRate
	in.dec, in.rs = dec, rs
	return nil
}

// receive hands one datagram to the inbound state.
func (in *inputPath) receive(b []byte, src netip.AddrPort, now time.Time, rtcpSocket bool) {
	in.mu.Lock()
	in.st.relayed, in.st.relayPkt = false, RelayedPacket{}
	in.st.receive(b, src, now, rtcpSocket)
	fn, rp, relayed := in.st.relay, in.st.relayPkt, in.st.relayed
	in.mu.Unlock()
	if relayed && fn != nil {
		// Unlocked: the bridge's other session takes its own locks.
		fn(rp)
	}
}

// tick plays out one packet time at now and returns the packet time to
// the next tick and the remote's liveness (for the media timeout).
func (in *inputPath) tick(now time.Time) (ptime time.Duration, live liveness) {
	in.cmu.Lock()
	defer in.cmu.Unlock()
	in.mu.Lock()
	ptime, live = in.st.ptime, in.st.live
	if in.dec == nil {
		in.mu.Unlock()
		return ptime, live
	}
	p, st := in.st.jb.Pop(now)
	n := copy(in.payload[:], p)
	in.mu.Unlock()

	want := samplesAt(in.dec.rate(), ptime)
	var k int
	switch {
	case st.Kind == media.PopFrame && isCN(st.PayloadType):
		k = min(want, len(in.line))
		clear(in.line[:k])
	case st.Kind == media.PopFrame:
		var err error
		if k, err = in.dec.decode(in.line, in.payload[:n]); err != nil {
			in.stats.inc(cDecodeErrors)
			k = in.dec.conceal(in.line, want, 1)
		}
	case st.Kind == media.PopLost:
		k = in.dec.conceal(in.line, want, st.LostRun)
	default:
		// Buffering, comfort noise, or a sender pause: silence.
		k = min(want, len(in.line))
		clear(in.line[:k])
	}
	pcm := in.line[:k]
	if in.rs != nil {
		m, _ := in.rs.Process(in.resampled, pcm)
		pcm = in.resampled[:m]
	}
	in.push(pcm, now)
	return ptime, live
}

// push appends audio at InputRate that ends at now, dropping the oldest
// beyond the FIFO, and queues every whole frame.
func (in *inputPath) push(pcm []int16, now time.Time) {
	// The frames' starts run on from the previous frame's end, so they
	// stay contiguous when the packet time changes; they follow the clock
	// again when they drifted too far from it (a stalled clock).
	at := now.Add(-time.Duration(len(in.fifo)+len(pcm)) * messages.FrameDuration / time.Duration(in.frame))
	if d := at.Sub(in.fifoStart); in.fifoStart.IsZero() || d > maxStartDrift || d < -maxStartDrift {
		in.fifoStart = at
	}
	if over := len(in.fifo) + len(pcm) - cap(in.fifo); over > 0 {
		over = min(over, len(in.fifo))
		in.fifo = in.fifo[:copy(in.fifo, in.fifo[over:])]
		in.fifoStart = in.fifoStart.Add(time.Duration(over) * messages.FrameDuration / time.Duration(in.frame))
		pcm = pcm[:min(len(pcm), cap(in.fifo)-len(in.fifo))]
	}
	in.fifo = append(in.fifo, pcm...)
	for len(in.fifo) >= in.frame {
		in.queue(in.fifo[:in.frame], in.fifoStart)
		in.fifo = in.fifo[:copy(in.fifo, in.fifo[in.frame:])]
		in.fifoStart = in.fifoStart.Add(messages.FrameDuration)
	}
}

// queue puts one frame in the ring for ReadFrame, dropping the oldest
// when ReadFrame is behind by the whole ring.
func (in *inputPath) queue(pcm []int16, start time.Time) {
	in.rmu.Lock()
	if in.count == len(in.ring) {
		in.head = (in.head + 1) % len(in.ring)
		in.count--
		in.stats.inc(cInputDropped)
	}
	i := (in.head + in.count) % len(in.ring)
	copy(in.ring[i], pcm)
	in.starts[i] = start
	in.count++
	in.rmu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// ReadFrame waits for the next 20 ms of the caller's audio (see
// conn.Conn): frames come at the pace of the remote's packets once
// Start ran, silence while the jitter buffer fills. After the session
// ended it returns conn.ErrClosed wrapping the reason
// (ErrMediaTimeout, ErrClosed).
func (s *Session) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	in := &s.in
	want := s.cfg.InputRate / 50
	for {
		if s.ended() {
			return s.closedErr()
		}
		in.rmu.Lock()
		if in.count > 0 {
			if cap(f.PCM) < want {
				f.PCM = make([]int16, want)
			}
			f.PCM = f.PCM[:want]
			copy(f.PCM, in.ring[in.head])
			f.Start, f.Seq, f.Rate = in.starts[in.head], in.seq, s.cfg.InputRate
			in.seq++
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
		case <-s.done:
		}
	}
}
