package rtp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
)

// Pacing of the output.
const (
	// prebufferWait: a talk spurt starts when two frames are queued, so
	// every later frame has a frame time of slack against the writer's
	// scheduling; a lone frame goes after this long.
	prebufferWait = 2 * messages.FrameDuration
	// silenceTail is how many packets of silence after speech go through
	// the call's encoder (a stateful codec settles) before the cached
	// silence packet takes over.
	silenceTail = 5
	// maxMarks bounds the marks held behind queued audio.
	maxMarks = 1024
	// maxPayload is the payload buffer: Opus at 60 ms fits, G.711 at
	// 60 ms is 480 bytes.
	maxPayload = 1500 - 12
)

// outItem is a queued frame of bot audio, or a mark (pcm nil).
type outItem struct {
	epoch messages.Epoch
	pcm   []int16
	mark  string
	at    time.Time
}

// stagedMark is a mark that waits for the first pos staged samples.
type stagedMark struct {
	name string
	pos  int
}

// outputPath is the bot's audio: WriteFrame queues a copy; the sender
// takes one packet time per tick into its stage, converts it to the line
// rate, encodes, packetises and sends it; marks echo once the samples
// before them went out. While idle it sends encoded silence, so the
// remote's jitter buffer keeps its timing and NAT bindings stay open.
type outputPath struct {
	mu          sync.Mutex
	items       []outItem
	frames      int
	marks       int
	talking     bool
	staged      int // samples in the stage not yet sent
	stagedMarks []stagedMark
	free        [][]int16
	onEcho      func(string)
	echoes      []string // the sender's, reused
	frame       int
	queueCap    int

	// cmu guards the codec and packet state (the sender, Update).
	cmu        sync.Mutex
	enc        encoder
	codec      Codec
	rs         *media.Resampler // nil when OutputRate is the encode rate
	stage      []int16          // OutputRate
	line       []int16          // encode rate
	packet     []byte
	silencePkt []byte
	quiet      int
	need       int // samples at OutputRate per packet
	lineNeed   int
	tsStep     uint32
	pt         uint8
	ssrc       uint32
	seq        uint16
	ts         uint32
	ptime      time.Duration
	send       bool
	dest       netip.AddrPort
	symmetric  bool
	first      bool
	eventPT    uint8
	events     bool
	// The relay mode (SetRelayOutput, Relay): relayBase is our timestamp
	// at its start, relaySrc the first relayed packet's, relayLast the
	// newest we sent.
	relaying                       bool
	relayHave                      bool
	relayBase, relaySrc, relayLast uint32
	// dtmf is a SendDTMF under way, eventTS its event's timestamp.
	dtmf    *dtmfSend
	eventTS uint32
	// For the sender report.
	sentPackets, sentOctets uint32
	lastTS                  uint32
	lastSentAt              time.Time
	clockRate               int
}

func (o *outputPath) init(cfg Config, ssrc uint32, seq uint16, ts uint32) {
	o.frame = cfg.OutputRate / 50
	o.queueCap = cfg.OutputQueue
	o.ssrc, o.seq, o.ts = ssrc, seq, ts
	o.first = true
	o.symmetric = cfg.SymmetricRTP
	o.stage = make([]int16, 0, samplesAt(cfg.OutputRate, MaxPtime)+o.frame)
	// The resampler only runs for G.711 and G.722 (8 or 16 kHz lines).
	o.line = make([]int16, samplesAt(maxWideRate, MaxPtime)+resampleSlack)
	o.packet = make([]byte, 12+maxPayload)
}

// configure swaps in p's encoder, resampler and packet format.
func (o *outputPath) configure(p Params, cfg Config, enc encoder) error {
	var rs *media.Resampler
	if enc.rate() != cfg.OutputRate {
		var err error
		if rs, err = media.NewResampler(cfg.OutputRate, enc.rate(), media.ResamplerConfig{}); err != nil {
			return err
		}
	}
	lineNeed := samplesAt(enc.rate(), p.PtimeOut)
	silence, err := silencePacket(p, cfg, lineNeed)
	if err != nil {
		return err
	}
	o.cmu.Lock()
	defer o.cmu.Unlock()
	changed := o.enc != nil && (p.Codec != o.codec || p.PayloadType != o.pt)
	o.enc, o.rs = enc, rs
	o.need = samplesAt(cfg.OutputRate, p.PtimeOut)
	o.lineNeed = lineNeed
	o.tsStep = uint32(samplesAt(p.ClockRate, p.PtimeOut))
	o.pt, o.ptime = p.PayloadType, p.PtimeOut
	o.eventPT, o.events = p.EventPayloadType, p.Events
	o.send = p.sendAllowed()
	o.dest = p.RemoteRTP
	o.silencePkt = silence
	o.clockRate = p.ClockRate
	o.quiet = 0
	o.codec = p.Codec
	if changed {
		o.first = true // a new format starts with the marker
	}
	return nil
}

// silencePacket is a packet time of silence encoded by a fresh encoder:
// for a stateful codec the last of a few, settled.
func silencePacket(p Params, cfg Config, lineNeed int) ([]byte, error) {
	enc, err := newEncoder(p, cfg.OutputRate)
	if err != nil {
		return nil, err
	}
	pcm := make([]int16, lineNeed)
	buf := make([]byte, maxPayload)
	var k int
	for range silenceTail {
		if k, err = enc.encode(buf, pcm); err != nil {
			return nil, fmt.Errorf("%w: silence: %w", ErrCodec, err)
		}
	}
	return buf[:k:k], nil
}

// WriteFrame queues a copy of f for sending (see conn.Conn): it never
// blocks and keeps nothing of f. Beyond Config.OutputQueue frames the
// oldest queued frame is dropped and counted.
func (s *Session) WriteFrame(f *messages.OutputAudio) error {
	if s.ended() {
		return s.closedErr()
	}
	o := &s.out
	if len(f.PCM) != o.frame || (f.Rate != 0 && f.Rate != s.cfg.OutputRate) {
		return fmt.Errorf("%w: %d samples at %d Hz, want %d at %d Hz", ErrFrameSize, len(f.PCM), f.Rate, o.frame, s.cfg.OutputRate)
	}
	o.mu.Lock()
	var buf []int16
	if k := len(o.free); k > 0 {
		buf, o.free = o.free[k-1], o.free[:k-1]
	} else {
		buf = make([]int16, o.frame)
	}
	copy(buf, f.PCM)
	var echoes []string
	if o.frames >= o.queueCap {
		o.dropOldestLocked()
		s.stats.inc(cOutputDropped)
		echoes = o.leadingMarksLocked(nil)
	}
	o.items = append(o.items, outItem{epoch: f.Epoch, pcm: buf, at: time.Now()})
	o.frames++
	o.mu.Unlock()
	s.echo(echoes)
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

// Clear drops the queued frames of epochs before epoch; marks stay and
// echo once no audio is ahead of them. What the sender has staged (less
// than a packet) still goes out.
func (s *Session) Clear(epoch messages.Epoch) error {
	if s.ended() {
		return s.closedErr()
	}
	o := &s.out
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
	if o.frames == 0 && o.staged == 0 {
		o.talking = false
	}
	echoes := o.leadingMarksLocked(nil)
	o.mu.Unlock()
	s.echo(echoes)
	return nil
}

// Mark asks for an echo of name once the audio written before it has been
// sent (at once when none is queued). Sent means handed to the socket: the
// remote plays it after its jitter buffer.
func (s *Session) Mark(name string) error {
	if s.ended() {
		return s.closedErr()
	}
	o := &s.out
	o.mu.Lock()
	if o.marks+len(o.stagedMarks) >= maxMarks {
		o.mu.Unlock()
		return fmt.Errorf("%w: %d marks are waiting already", ErrQueueFull, maxMarks)
	}
	o.items = append(o.items, outItem{mark: name})
	o.marks++
	echoes := o.leadingMarksLocked(nil)
	o.mu.Unlock()
	s.echo(echoes)
	return nil
}

// OnMarkEcho registers the function that receives the echoes (nil
// unregisters). It is called from the sender or from Mark, Clear and
// WriteFrame; it must only send a message.
func (s *Session) OnMarkEcho(fn func(name string)) {
	s.out.mu.Lock()
	s.out.onEcho = fn
	s.out.mu.Unlock()
}

// leadingMarksLocked takes the marks at the head of the queue (no frame
// ahead of them): with nothing staged they are due now (appended to dst),
// else they wait for the staged samples.
func (o *outputPath) leadingMarksLocked(dst []string) []string {
	i := 0
	for ; i < len(o.items) && o.items[i].pcm == nil; i++ {
		if o.staged == 0 {
			dst = append(dst, o.items[i].mark)
		} else {
			o.stagedMarks = append(o.stagedMarks, stagedMark{name: o.items[i].mark, pos: o.staged})
		}
	}
	if i > 0 {
		o.marks -= i
		n := copy(o.items, o.items[i:])
		clear(o.items[n:])
		o.items = o.items[:n]
	}
	return dst
}

// echo hands names to the registered echo function.
func (s *Session) echo(names []string) {
	if len(names) == 0 {
		return
	}
	s.out.mu.Lock()
	fn := s.out.onEcho
	s.out.mu.Unlock()
	if fn == nil {
		return
	}
	for _, n := range names {
		fn(n)
	}
}

// headAtLocked is when the first queued frame was queued.
func (o *outputPath) headAtLocked() time.Time {
	for _, it := range o.items {
		if it.pcm != nil {
			return it.at
		}
	}
	return time.Time{}
}

// tick sends one packet time at now: the queued audio, or silence; on
// hold nothing goes out, but the queue drains at the same pace (marks
// echo, the timestamp runs on).
func (s *Session) outputTick(now time.Time) time.Duration {
	o := &s.out
	o.cmu.Lock()
	if o.enc == nil {
		o.cmu.Unlock()
		return DefaultPtime
	}
	if o.relaying {
		// A bridge sends in our place; the engine's audio waits.
		ptime := o.ptime
		o.cmu.Unlock()
		return ptime
	}
	if s.dtmfTick(now) {
		// An event packet went in place of audio: the queue waits.
		ptime := o.ptime
		o.cmu.Unlock()
		return ptime
	}
	o.mu.Lock()
	spurt := false
	if !o.talking && o.frames > 0 && (o.frames >= 2 || now.Sub(o.headAtLocked()) >= prebufferWait) {
		o.talking, spurt = true, true
	}
	if o.talking {
		for len(o.stage) < o.need {
			pcm := o.takeLocked()
			if pcm == nil {
				break
			}
			o.stage = append(o.stage, pcm...)
			o.free = append(o.free, pcm)
			o.staged = len(o.stage)
			o.echoes = o.leadingMarksLocked(o.echoes[:0])
		}
		if len(o.stage) < o.need {
			// The spurt ran dry: what is staged goes out padded.
			if o.frames == 0 && len(o.stage) == 0 {
				s.stats.inc(cSendGaps)
			}
			o.talking = o.frames > 0
		}
	}
	o.mu.Unlock()

	audio := len(o.stage) > 0
	if n := len(o.stage); audio && n < o.need {
		o.stage = o.stage[:o.need]
		clear(o.stage[n:])
	}
	if o.send {
		s.sendPacket(audio, spurt || o.first, now)
	} else {
		s.stats.inc(cHoldFrames)
	}
	o.ts += o.tsStep
	sent := 0
	if audio {
		sent = o.need
		o.stage = o.stage[:copy(o.stage, o.stage[o.need:])]
	}

	o.mu.Lock()
	o.staged = len(o.stage)
	echoes := o.echoes[:0]
	kept := o.stagedMarks[:0]
	for _, m := range o.stagedMarks {
		if m.pos <= sent {
			echoes = append(echoes, m.name)
			continue
		}
		m.pos -= sent
		kept = append(kept, m)
	}
	clear(o.stagedMarks[len(kept):])
	o.stagedMarks = kept
	echoes = o.leadingMarksLocked(echoes)
	o.echoes = echoes
	o.mu.Unlock()
	ptime := o.ptime
	o.cmu.Unlock()
	// The echo function runs with no lock of the session held.
	s.echo(echoes)
	return ptime
}

// OutputLead is how far the audio written to the session can be ahead of
// what has gone out on the wire: the talk-spurt prebuffer, and a packet
// time beyond one frame. The session adds it to the pacer's lead margin,
// so that a word still queued here at a barge-in is not taken as heard.
func (s *Session) OutputLead() time.Duration {
	s.out.cmu.Lock()
	defer s.out.cmu.Unlock()
	return prebufferWait + max(0, s.out.ptime-messages.FrameDuration)
}

// takeLocked removes the frame at the head (after leading marks, which
// must have been taken) and returns its samples.
func (o *outputPath) takeLocked() []int16 {
	if len(o.items) == 0 || o.items[0].pcm == nil {
		return nil
	}
	pcm := o.items[0].pcm
	n := copy(o.items, o.items[1:])
	clear(o.items[n:])
	o.items = o.items[:n]
	o.frames--
	return pcm
}

// sendPacket encodes the staged packet time (audio) or silence and sends
// it. o.cmu is held.
func (s *Session) sendPacket(audio, marker bool, now time.Time) {
	o := &s.out
	payload := o.packet[12:]
	var n int
	switch {
	case audio:
		o.quiet = 0
		n = s.encodeStage(payload)
	case o.quiet >= silenceTail:
		n = copy(payload, o.silencePkt)
		s.stats.inc(cSilencePackets)
	default:
		o.quiet++
		clear(o.stage[:o.need])
		n = s.encodeStage(payload)
		s.stats.inc(cSilencePackets)
	}
	if n < 0 {
		return
	}
	if s.writePacket(o.pt, marker, o.ts, n, now) {
		o.first = false
	}
}

// writePacket sends the packet buffer's payload of n bytes with our
// header (pt, marker, ts, the next sequence number, our SSRC); o.cmu is
// held. It reports whether the socket took it.
func (s *Session) writePacket(pt uint8, marker bool, ts uint32, n int, now time.Time) bool {
	o := &s.out
	h := o.packet[:12]
	h[0] = 0x80
	h[1] = pt & 0x7f
	if marker {
		h[1] |= 0x80
	}
	binary.BigEndian.PutUint16(h[2:], o.seq)
	binary.BigEndian.PutUint32(h[4:], ts)
	binary.BigEndian.PutUint32(h[8:], o.ssrc)
	dest := o.dest
	if o.symmetric {
		if src, ok := s.latchedSource(); ok {
			dest = src
		}
	}
	if _, err := s.rtpConn.WriteToUDPAddrPort(o.packet[:12+n], dest); err != nil {
		s.stats.inc(cSendErrors)
		return false
	}
	o.seq++
	o.sentPackets++
	o.sentOctets += uint32(n)
	// The sender report's timestamp is the stream's (an event packet
	// carries its event's start).
	o.lastTS, o.lastSentAt = o.ts, now
	s.stats.inc(cPacketsOut)
	s.stats.add(cBytesOut, uint64(12+n))
	return true
}

// encodeStage converts need samples of the stage to the line rate and
// encodes them into payload; -1 on an error (counted).
func (s *Session) encodeStage(payload []byte) int {
	o := &s.out
	pcm := o.stage[:o.need]
	if o.rs != nil {
		m, _ := o.rs.Process(o.line, pcm)
		// The ratios are whole for every rate pair, but hold the packet
		// size exactly whatever the filter's phase.
		for ; m < o.lineNeed; m++ {
			o.line[m] = 0
		}
		pcm = o.line[:o.lineNeed]
	}
	n, err := o.enc.encode(payload, pcm)
	if err != nil {
		s.stats.inc(cEncodeErrors)
		return -1
	}
	return n
}
