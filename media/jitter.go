package media

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Defaults of JitterConfig: G.711 over RTP, 8 kHz, 20 ms packets.
const (
	DefaultJitterClockRate    = 8000
	DefaultJitterMinDelay     = 1
	DefaultJitterInitialDelay = 3
	DefaultJitterMaxDelay     = 15
	DefaultJitterCapacity     = 50
	DefaultJitterMaxPayload   = 1500
	DefaultJitterShrinkAfter  = 100
)

// Limits of JitterConfig.
const (
	// maxJitterCapacity keeps the window far inside the sequence space, so
	// that the RFC 3550 misorder and dropout rules stay meaningful.
	maxJitterCapacity = 1000
	// jitterMultiplier turns the RFC 3550 interarrival jitter (a mean
	// deviation) into a delay: for arrivals spread uniformly over X the
	// estimate tends to X/3, so three of it cover the spread.
	jitterMultiplier = 3
)

// RFC 3550 appendix A.1: a packet more than maxDropout ahead or maxMisorder
// behind the highest sequence number is a jump, believed only when the
// next packet continues it.
const (
	maxDropout  = 3000
	maxMisorder = 100
)

// JitterConfig tunes a JitterBuffer. Zero values take the defaults. Delays
// are counted in frames (packets of SamplesPerFrame).
type JitterConfig struct {
	// ClockRate is the RTP clock rate in Hz: 8000 for G.711, 48000 for Opus.
	ClockRate int
	// SamplesPerFrame is the timestamp increment of one packet, the packet
	// time in clock units; one Pop plays one such frame. Default: 20 ms.
	SamplesPerFrame int
	// PayloadTypes are the payload types played; others (comfort noise,
	// telephone events, RTCP on a muxed port) are counted and skipped.
	// Default: PCMU and PCMA.
	PayloadTypes []uint8
	// MinDelay and MaxDelay bound the adaptive playout delay; InitialDelay
	// is where it starts. A delay of D frames means playout starts when D
	// frames are held, the one played included.
	MinDelay, InitialDelay, MaxDelay int
	// Capacity is the most packets held; beyond it the oldest are dropped.
	// It is also the window for reordering and the horizon beyond which a
	// timestamp is a jump of the sender's timeline.
	Capacity int
	// MaxPayload is the size of a slot: longer payloads are refused with
	// ErrRTPPayloadTooLarge. Default 1500; 320 is plenty for G.711.
	MaxPayload int
	// ShrinkAfter is how many frames must play without a late packet or an
	// underrun before the target delay steps down one frame. Default 100
	// (2 s of 20 ms frames).
	ShrinkAfter int
	// IdleTimeout: when nothing has arrived for this long and nothing is
	// held, the buffer stops reporting underruns and buffers again, so a
	// stream that resumes gets its delay back. Default: MaxDelay+5 frames.
	IdleTimeout time.Duration
}

// withDefaults fills the zero fields; it keeps the delays ordered when only
// some of them are set.
func (c JitterConfig) withDefaults() JitterConfig {
	if c.ClockRate == 0 {
		c.ClockRate = DefaultJitterClockRate
	}
	if c.SamplesPerFrame == 0 {
		c.SamplesPerFrame = c.ClockRate / 50
	}
	if len(c.PayloadTypes) == 0 {
		c.PayloadTypes = []uint8{PayloadTypePCMU, PayloadTypePCMA}
	}
	if c.MinDelay == 0 {
		c.MinDelay = DefaultJitterMinDelay
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = max(DefaultJitterMaxDelay, c.MinDelay)
	}
	if c.InitialDelay == 0 {
		c.InitialDelay = min(max(DefaultJitterInitialDelay, c.MinDelay), c.MaxDelay)
	}
	if c.Capacity == 0 {
		c.Capacity = max(DefaultJitterCapacity, 2*c.MaxDelay)
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = DefaultJitterMaxPayload
	}
	if c.ShrinkAfter == 0 {
		c.ShrinkAfter = DefaultJitterShrinkAfter
	}
	if c.IdleTimeout == 0 && c.ClockRate > 0 && c.SamplesPerFrame > 0 {
		c.IdleTimeout = time.Duration(c.MaxDelay+5) * time.Duration(c.SamplesPerFrame) * time.Second / time.Duration(c.ClockRate)
	}
	return c
}

// Validate reports a configuration that cannot work: negative values, a
// payload type above 127, a frame shorter than one clock tick, delays out of
// order, or a capacity below MaxDelay or above 1000.
func (c JitterConfig) Validate() error {
	switch {
	case c.ClockRate < 0:
		return fmt.Errorf("%w: jitter clock rate %d", ErrInvalidConfig, c.ClockRate)
	case c.SamplesPerFrame < 0:
		return fmt.Errorf("%w: jitter samples per frame %d", ErrInvalidConfig, c.SamplesPerFrame)
	case c.MinDelay < 0 || c.InitialDelay < 0 || c.MaxDelay < 0:
		return fmt.Errorf("%w: jitter delays %d/%d/%d", ErrInvalidConfig, c.MinDelay, c.InitialDelay, c.MaxDelay)
	case c.Capacity < 0 || c.MaxPayload < 0 || c.ShrinkAfter < 0 || c.IdleTimeout < 0:
		return fmt.Errorf("%w: jitter capacity %d, max payload %d, shrink after %d, idle %v",
			ErrInvalidConfig, c.Capacity, c.MaxPayload, c.ShrinkAfter, c.IdleTimeout)
	}
	for _, pt := range c.PayloadTypes {
		if pt > 127 {
			return fmt.Errorf("%w: jitter payload type %d", ErrInvalidConfig, pt)
		}
	}
	d := c.withDefaults()
	switch {
	case d.SamplesPerFrame <= 0:
		return fmt.Errorf("%w: jitter clock rate %d gives no sample per frame", ErrInvalidConfig, d.ClockRate)
	case d.MinDelay > d.InitialDelay || d.InitialDelay > d.MaxDelay:
		return fmt.Errorf("%w: jitter delays min %d, initial %d, max %d out of order",
			ErrInvalidConfig, d.MinDelay, d.InitialDelay, d.MaxDelay)
	case d.Capacity < d.MaxDelay || d.Capacity > maxJitterCapacity:
		return fmt.Errorf("%w: jitter capacity %d outside [max delay %d, %d]",
			ErrInvalidConfig, d.Capacity, d.MaxDelay, maxJitterCapacity)
	case d.MaxPayload > math.MaxUint16:
		return fmt.Errorf("%w: jitter max payload %d", ErrInvalidConfig, d.MaxPayload)
	}
	return nil
}

// PopKind says what a Pop produced.
type PopKind uint8

// The outcomes of Pop.
const (
	// PopBuffering: playout has not started (no packet yet, or priming the
	// delay, or again after an idle stream). Play silence.
	PopBuffering PopKind = iota
	// PopFrame: the payload is the next frame in order.
	PopFrame
	// PopLost: no frame for this tick although one may be due: conceal
	// (PLC, or FEC from the following packet). Seq is the sequence number
	// expected at this tick. When nothing is held at all (an underrun) the
	// buffer cannot know yet whether the sender paused or a packet is
	// missing: the next packet tells, and the tick is counted then, as
	// Concealed or Paused (Undecided until then).
	PopLost
	// PopEmpty: the sender paused (its timestamps jumped ahead with no
	// sequence number missing, as with DTX or silence suppression): nothing
	// is due at this tick; play silence or comfort noise.
	PopEmpty
)

// String names the outcome for logs and test failures.
func (k PopKind) String() string {
	switch k {
	case PopBuffering:
		return "buffering"
	case PopFrame:
		return "frame"
	case PopLost:
		return "lost"
	case PopEmpty:
		return "empty"
	}
	return fmt.Sprintf("PopKind(%d)", int(k))
}

// PopStatus is the outcome of one Pop.
type PopStatus struct {
	Kind PopKind
	// Seq is the sequence number of the frame (PopFrame) or of the one
	// missing (PopLost).
	Seq uint16
	// Timestamp, PayloadType and Marker describe the frame (PopFrame only).
	Timestamp   uint32
	PayloadType uint8
	Marker      bool
	// LostRun counts the consecutive PopLost ticks since the last frame,
	// this one included; it is what ConcealPCM takes.
	LostRun int
}

// JitterStats is a snapshot of a JitterBuffer's counters. Every pushed
// packet lands in exactly one of Accepted, Duplicates, Late, BadVersion,
// Malformed, BadPayloadType and Jumps; every accepted packet ends played,
// dropped by Overflow, Discarded, or is still Held; every PopLost or
// PopEmpty tick is in exactly one of Concealed, Paused and Undecided.
type JitterStats struct {
	// Received counts every Push.
	Received uint64
	// Accepted counts packets stored for playout.
	Accepted uint64
	// Played counts frames returned by Pop.
	Played uint64
	// Duplicates counts second copies of a packet (dropped).
	Duplicates uint64
	// Late counts packets that arrived after their slot was played or
	// concealed (dropped).
	Late uint64
	// Lost counts sequence numbers whose playout slot passed without them;
	// those that arrive afterwards are counted Late as well.
	Lost uint64
	// Concealed counts the PopLost ticks that stood for a missing or late
	// frame: a sequence number the sender sent and that did not come in
	// time. An underrun tick (nothing held) is counted when the next packet
	// tells what it was: the sequence numbers missing before that packet
	// are placed just before it, as Pop places them, and the ticks at
	// their slots or at its own slot (a late packet) were losses.
	Concealed uint64
	// Paused counts the ticks at which the sender sent nothing because it
	// paused (Opus DTX, silence suppression: RFC 3550 5.1, the timestamp
	// jumps by the pause while the sequence number goes on by one): the
	// PopEmpty ticks and the underrun ticks that turned out, once the next
	// packet came, to lie before it in the sender's time without a
	// sequence number missing there. The marker bit (RFC 3551 4.1, set by
	// some senders on a talk spurt's first packet) is not needed for it
	// and does not change it.
	Paused uint64
	// Undecided counts the underrun ticks of the current underrun, which
	// the next packet will tell apart (Concealed or Paused): those of a
	// stream that is paused now, or ended. A gauge: it falls to 0 then.
	Undecided uint64
	// Reordered counts accepted packets that arrived after a higher
	// sequence number.
	Reordered uint64
	// Overflow counts held packets dropped, oldest first, to respect the
	// capacity.
	Overflow uint64
	// Discarded counts held packets dropped to cut the delay: beyond the
	// target when playout starts, one frame per step when the delay shrinks,
	// and all of them on a resync.
	Discarded uint64
	// BadVersion counts packets whose version was not 2; Malformed those
	// truncated, with bad padding or extension, or too large.
	BadVersion uint64
	Malformed  uint64
	// BadPayloadType counts packets of a payload type not configured.
	BadPayloadType uint64
	// Jumps counts packets dropped because their sequence number jumped
	// beyond the RFC 3550 dropout/misorder limits without confirmation.
	Jumps uint64
	// Resyncs counts restarts on a new SSRC, a confirmed sequence jump or a
	// timestamp beyond the capacity horizon.
	Resyncs uint64
	// Delay is the current playout delay and TargetDelay where the
	// adaptation is taking it, in frames.
	Delay, TargetDelay int
	// Jitter is the RFC 3550 interarrival jitter estimate.
	Jitter time.Duration
	// Held is the number of packets held now.
	Held int
	// HighestSeq is the extended highest sequence number (cycles<<16 | seq).
	HighestSeq uint32
}

// Slot states.
const (
	slotEmpty  uint8 = iota // never used since the last reset
	slotHeld                // a packet waiting for playout
	slotFiller              // a sequence number to skip silently: other payload type, or late
	slotGone                // played or dropped; kept to recognise duplicates
)

// jbSlot is one entry of the ring, indexed by extended sequence number
// modulo the capacity.
type jbSlot struct {
	esn    int64
	ts     int64
	state  uint8
	pt     uint8
	marker bool
	n      int
	buf    []byte
}

// JitterBuffer reorders inbound RTP packets of one stream and plays them out
// one frame per Pop at an adaptive delay, reporting missing frames at their
// playout time so the decoder conceals instead of stalling. It copies
// payloads into preallocated slots: Push and Pop do not allocate. It is not
// safe for concurrent use: one transport actor owns it.
//
// Playout follows the sender's timestamps: each Pop plays the slot
// [playTS, playTS+SamplesPerFrame) of the sender's clock. A missing packet
// is reported PopLost at its slot; if it arrives afterwards it is late and
// dropped. A timestamp gap without a missing sequence number is a sender
// pause (PopEmpty). When nothing is held (an underrun), the tick is
// PopLost, and the next packet tells whether it was a loss or a pause:
// Stats counts it Concealed or Paused then.
//
// Adaptive delay: the target rises at once to cover the RFC 3550 jitter
// estimate (three times it plus one frame) and, on a late packet, to the
// current delay plus how late it was; the delay follows the target upward
// only on underrun ticks (nothing held, which must be concealed anyway) by
// not advancing the playout clock. After ShrinkAfter frames without late
// packets or underruns the target steps down one frame (not below MinDelay
// nor the jitter estimate) and the delay follows by discarding one frame
// when the next is already due.
//
// Resync: a new SSRC, a sequence jump confirmed by the next packet (RFC 3550
// A.1), or a timestamp more than Capacity frames away from the playout clock
// restarts the stream: held packets are discarded, sequence and jitter state
// reset, and playout primes again at the current target delay.
type JitterBuffer struct {
	cfg      JitterConfig
	spf      int64
	capN     int64
	horizon  int64
	accepted [2]uint64
	slots    []jbSlot

	haveSource  bool
	ssrc        uint32
	highESN     int64 // highest extended sequence number seen
	refTS       int64 // extended timestamp of the highest packet played or held
	badSeq      uint16
	badSeqValid bool
	epoch       time.Time
	lastArrival time.Time
	transit     int64
	haveTransit bool
	jitter16    int64 // RFC 3550 A.8 jitter times 16, in clock units

	next        int64 // extended sequence number of the next frame to play
	started     bool
	everStarted bool // since the last source reset: fixes next as a floor
	playTS      int64
	cur, target int
	stable      int
	lostRun     int
	held        int

	// The underrun being told apart (settle): gapTicks PopLost ticks since
	// the buffer ran out of packets; the gapAdv of them that advanced the
	// playout clock played the slots from gapFrom on, the others held it
	// (the delay growing) at the slots in gapHolds. A hold raises cur,
	// which starts an underrun at 1 or more and stays at most MaxDelay, so
	// gapHolds (capacity MaxDelay) never grows. gapESN is the highest
	// sequence number already accounted for: missing ones below it were
	// settled before. passedESN is the highest sequence number that came
	// after its slot: every missing one below it went by too.
	gapTicks  uint64
	gapFrom   int64
	gapAdv    int64
	gapHolds  []int64
	gapESN    int64
	passedESN int64

	stats JitterStats
}

// NewJitterBuffer makes a jitter buffer with all its slots allocated; it
// fails with ErrInvalidConfig when cfg does not validate.
func NewJitterBuffer(cfg JitterConfig) (*JitterBuffer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.PayloadTypes = append([]uint8(nil), cfg.PayloadTypes...)
	j := &JitterBuffer{
		cfg:    cfg,
		spf:    int64(cfg.SamplesPerFrame),
		capN:   int64(cfg.Capacity),
		slots:  make([]jbSlot, cfg.Capacity),
		target: cfg.InitialDelay,
		// Room for every hold of an underrun (see gapHolds).
		gapHolds: make([]int64, 0, cfg.MaxDelay),
	}
	j.horizon = j.capN * j.spf
	for _, pt := range cfg.PayloadTypes {
		j.accepted[pt>>6] |= 1 << (pt & 63)
	}
	backing := make([]byte, cfg.Capacity*cfg.MaxPayload)
	for i := range j.slots {
		j.slots[i] = jbSlot{esn: math.MinInt64, buf: backing[i*cfg.MaxPayload : (i+1)*cfg.MaxPayload : (i+1)*cfg.MaxPayload]}
	}
	return j, nil
}

func (j *JitterBuffer) accepts(pt uint8) bool {
	return j.accepted[(pt&0x7f)>>6]&(1<<(pt&63)) != 0
}

func (j *JitterBuffer) slot(esn int64) *jbSlot {
	m := esn % j.capN
	if m < 0 {
		m += j.capN
	}
	return &j.slots[m]
}

// Push parses pkt and stores its payload (copied) for playout. A packet
// that is not RTP or malformed returns the parser's error and is counted; a
// duplicate, late, jumped or foreign-payload-type packet is a counted drop
// and returns nil. arrival is when the packet was received; it feeds the
// jitter estimate and the idle detection.
func (j *JitterBuffer) Push(pkt []byte, arrival time.Time) error {
	j.stats.Received++
	var p RTPPacket
	if err := ParseRTP(pkt, &p); err != nil {
		if errors.Is(err, ErrRTPVersion) {
			j.stats.BadVersion++
		} else {
			j.stats.Malformed++
		}
		return err
	}
	if !j.accepts(p.PayloadType) {
		j.stats.BadPayloadType++
		j.markFiller(&p)
		return nil
	}
	if len(p.Payload) > j.cfg.MaxPayload {
		j.stats.Malformed++
		return fmt.Errorf("%w: %d bytes, a slot holds %d", ErrRTPPayloadTooLarge, len(p.Payload), j.cfg.MaxPayload)
	}
	switch {
	case !j.haveSource:
		j.resetSource(&p, arrival)
	case p.SSRC != j.ssrc:
		j.resync(&p, arrival)
	}
	esn, class := j.extendSeq(p.SequenceNumber)
	switch class {
	case seqJump:
		j.stats.Jumps++
		return nil
	case seqRestart:
		j.resync(&p, arrival)
		esn = j.highESN
	}
	ts := j.refTS + int64(int32(p.Timestamp-uint32(j.refTS)))

	if esn < j.next {
		s := j.slot(esn)
		switch {
		case s.esn == esn && s.state != slotEmpty:
			j.stats.Duplicates++
			return nil
		case !j.everStarted && j.highESN-esn < j.capN:
			// Reordered ahead of the first packet, before playout: it
			// becomes the first.
			j.next = esn
		default:
			j.stats.Late++
			j.onLate(ts)
			j.updateJitter(ts, arrival)
			return nil
		}
	}
	s := j.slot(esn)
	if s.esn == esn && s.state != slotEmpty && s.state != slotGone {
		j.stats.Duplicates++
		return nil
	}
	// A packet of the stream at or after the next to play: it tells what
	// the underrun before it was.
	if j.gapTicks > 0 {
		j.settle(esn, ts)
	} else if esn > j.gapESN {
		j.gapESN = esn
	}
	if esn >= j.next+j.capN {
		j.makeRoom(esn, ts)
	}
	if j.started {
		if d := ts - j.playTS; d > j.horizon || d < -j.horizon {
			j.resync(&p, arrival)
			esn, ts = j.highESN, j.refTS
			s = j.slot(esn)
		} else if ts < j.playTS {
			// Its slot was concealed already: too late to play, and the
			// sequence number must not be counted lost.
			j.stats.Late++
			j.stats.Lost++
			s.esn, s.state = esn, slotFiller
			j.passedESN = max(j.passedESN, esn)
			j.onLate(ts)
			j.updateJitter(ts, arrival)
			return nil
		}
	}

	s.esn, s.ts, s.state = esn, ts, slotHeld
	s.pt, s.marker = p.PayloadType, p.Marker
	s.n = copy(s.buf, p.Payload)
	j.held++
	j.stats.Accepted++
	if esn < j.highESN {
		j.stats.Reordered++
	} else {
		j.highESN, j.refTS = esn, ts
	}
	j.updateJitter(ts, arrival)
	return nil
}

// seqClass is how a sequence number relates to the highest one seen.
type seqClass uint8

const (
	seqOK      seqClass = iota // in order with a permissible gap, or reordered
	seqJump                    // too far: dropped until confirmed
	seqRestart                 // a jump confirmed by the next packet
)

// extendSeq maps seq to an extended sequence number near highESN (RFC 3550
// A.1): up to maxDropout ahead (crossing 65535->0 adds a cycle) or
// maxMisorder behind; anything else is a jump, believed when the next
// packet follows it.
func (j *JitterBuffer) extendSeq(seq uint16) (int64, seqClass) {
	udelta := seq - uint16(j.highESN)
	switch {
	case udelta < maxDropout:
		j.badSeqValid = false
		return j.highESN + int64(udelta), seqOK
	case int(udelta) > 1<<16-maxMisorder:
		j.badSeqValid = false
		return j.highESN - int64(1<<16-int(udelta)), seqOK
	case j.badSeqValid && seq == j.badSeq:
		return 0, seqRestart
	}
	j.badSeq, j.badSeqValid = seq+1, true
	return 0, seqJump
}

// markFiller records the sequence number of a packet of another payload
// type of the same source (comfort noise, telephone events), so that Pop
// skips it silently instead of reporting it lost.
func (j *JitterBuffer) markFiller(p *RTPPacket) {
	if !j.haveSource || p.SSRC != j.ssrc {
		return
	}
	udelta := p.SequenceNumber - uint16(j.highESN)
	var esn int64
	switch {
	case udelta < maxDropout:
		esn = j.highESN + int64(udelta)
	case int(udelta) > 1<<16-maxMisorder:
		esn = j.highESN - int64(1<<16-int(udelta))
	default:
		return
	}
	if esn < j.next || esn >= j.next+j.capN {
		return
	}
	s := j.slot(esn)
	if s.esn == esn && s.state != slotEmpty && s.state != slotGone {
		return
	}
	s.esn, s.state = esn, slotFiller
	if esn > j.highESN {
		j.highESN = esn
	}
}

// makeRoom drops the oldest sequence numbers so that esn fits the window:
// held packets count as overflow, never-received ones as lost. When playing,
// the playout clock jumps to the new oldest and the delay becomes the whole
// window, which the shrink policy then drains one frame per tick.
func (j *JitterBuffer) makeRoom(esn, ts int64) {
	newNext := esn - j.capN + 1
	for e := j.next; e < newNext; e++ {
		s := j.slot(e)
		switch {
		case s.esn != e || s.state == slotEmpty || s.state == slotGone:
			j.stats.Lost++
		case s.state == slotHeld:
			s.state = slotGone
			j.held--
			j.stats.Overflow++
		default:
			s.state = slotGone
		}
	}
	j.next = newNext
	if j.started {
		j.playTS = max(j.playTS, ts-(esn-newNext)*j.spf)
		j.cur = int(j.capN)
	}
}

// onLate raises the target delay to cover a packet with timestamp ts that
// came after its slot: the current delay plus its lateness in frames.
func (j *JitterBuffer) onLate(ts int64) {
	late := int64(1)
	if j.started && ts < j.playTS {
		late = min((j.playTS-ts+j.spf-1)/j.spf, int64(j.cfg.MaxDelay))
	}
	j.target = min(j.cfg.MaxDelay, max(j.target, j.cur+int(late)))
	j.stable = 0
}

// updateJitter runs the RFC 3550 A.8 estimator on one accepted packet and
// raises the target delay to cover it.
func (j *JitterBuffer) updateJitter(ts int64, arrival time.Time) {
	j.lastArrival = arrival
	d := arrival.Sub(j.epoch)
	rate := int64(j.cfg.ClockRate)
	units := int64(d/time.Second)*rate + int64(d%time.Second)*rate/int64(time.Second)
	transit := units - ts
	if j.haveTransit {
		diff := transit - j.transit
		if diff < 0 {
			diff = -diff
		}
		diff = min(diff, 1<<40) // a garbage timestamp must not overflow the sum
		j.jitter16 += diff - ((j.jitter16 + 8) >> 4)
	}
	j.transit, j.haveTransit = transit, true
	j.target = max(j.target, j.jitterDelay())
}

// jitterDelay is the delay the jitter estimate asks for, in frames, within
// [MinDelay, MaxDelay].
func (j *JitterBuffer) jitterDelay() int {
	jt := j.jitter16 >> 4
	if jt > int64(j.cfg.MaxDelay)*j.spf {
		return j.cfg.MaxDelay
	}
	frames := 1 + (jitterMultiplier*jt+j.spf-1)/j.spf
	return min(max(int(frames), j.cfg.MinDelay), j.cfg.MaxDelay)
}

// resync restarts on p as a new stream and counts it.
func (j *JitterBuffer) resync(p *RTPPacket, arrival time.Time) {
	j.stats.Resyncs++
	j.resetSource(p, arrival)
}

// resetSource forgets the stream and makes p its first packet. The target
// delay is kept: the network path is likely the same.
func (j *JitterBuffer) resetSource(p *RTPPacket, arrival time.Time) {
	// The underrun before a new stream: no sequence number relates the two,
	// so nothing shows a pause.
	j.concealUndecided()
	for i := range j.slots {
		if j.slots[i].state == slotHeld {
			j.stats.Discarded++
		}
		j.slots[i].esn, j.slots[i].state = math.MinInt64, slotEmpty
	}
	j.held = 0
	j.haveSource = true
	j.ssrc = p.SSRC
	j.highESN = int64(p.SequenceNumber)
	j.refTS = int64(p.Timestamp)
	j.badSeqValid = false
	j.epoch = arrival
	j.lastArrival = arrival
	j.haveTransit = false
	j.jitter16 = 0
	j.next = j.highESN
	j.gapESN, j.passedESN = j.next-1, j.next-1
	j.started, j.everStarted = false, false
	j.playTS = 0
	j.stable, j.lostRun = 0, 0
}

// Pop returns the frame due at this tick (one call per SamplesPerFrame of
// real time). The payload stays valid until the next Push or Pop. now is
// used to detect an idle stream.
func (j *JitterBuffer) Pop(now time.Time) ([]byte, PopStatus) {
	if !j.started && !j.prime() {
		j.lostRun = 0
		return nil, PopStatus{Kind: PopBuffering}
	}
	// Each turn consumes a sequence number or returns; held packets lie in
	// [next, next+capacity), so this ends.
	for {
		s := j.slot(j.next)
		if s.esn == j.next {
			switch s.state {
			case slotFiller:
				s.state = slotGone
				j.next++
				continue
			case slotHeld:
				return j.playHead(s)
			}
		}
		h := j.findHeld(j.next)
		if h == nil {
			return j.underrun(now)
		}
		// Where the missing frame's slot lies, counting back from the
		// next held packet.
		est := h.ts - (h.esn-j.next)*j.spf
		switch {
		case est < j.playTS || j.next < j.passedESN:
			// Its slot went by while concealing an underrun (or before a
			// packet that came after its own slot: settle counted the
			// concealment there).
			j.stats.Lost++
			j.next++
		case est < j.playTS+j.spf:
			j.stats.Lost++
			j.stats.Concealed++
			missing := j.next
			j.next++
			j.playTS += j.spf
			j.lostRun++
			return nil, PopStatus{Kind: PopLost, Seq: uint16(missing), LostRun: j.lostRun}
		default:
			j.playTS += j.spf
			j.stats.Paused++
			return nil, PopStatus{Kind: PopEmpty}
		}
	}
}

// playHead plays the held packet s at next, unless its timestamp is still
// ahead of the playout clock (a sender pause).
func (j *JitterBuffer) playHead(s *jbSlot) ([]byte, PopStatus) {
	if s.ts >= j.playTS+j.spf {
		j.playTS += j.spf
		j.stats.Paused++
		return nil, PopStatus{Kind: PopEmpty}
	}
	if j.cur > j.target {
		// Shrink by one frame: drop this one when the next is held and due
		// at the following tick.
		if n := j.slot(j.next + 1); n.esn == j.next+1 && n.state == slotHeld && n.ts < j.playTS+2*j.spf {
			s.state = slotGone
			j.held--
			j.stats.Discarded++
			j.next++
			j.playTS += j.spf
			j.cur--
			s = n
		}
	}
	s.state = slotGone
	j.held--
	j.next++
	j.playTS += j.spf
	j.lostRun = 0
	j.stats.Played++
	j.stable++
	if j.stable >= j.cfg.ShrinkAfter {
		j.stable = 0
		if floor := j.jitterDelay(); j.target > floor { // jitterDelay is at least MinDelay
			j.target--
		}
	}
	return s.buf[:s.n:s.n], PopStatus{Kind: PopFrame, Seq: uint16(s.esn), Timestamp: uint32(s.ts), PayloadType: s.pt, Marker: s.marker}
}

// underrun handles a tick with nothing held at or after next: conceal, and
// grow the delay by holding the playout clock when the target asks for
// more; after IdleTimeout without arrivals, go back to buffering. The tick
// is counted Undecided until the next packet tells a pause from a loss
// (settle).
func (j *JitterBuffer) underrun(now time.Time) ([]byte, PopStatus) {
	if now.Sub(j.lastArrival) >= j.cfg.IdleTimeout {
		j.started = false
		j.lostRun = 0
		return nil, PopStatus{Kind: PopBuffering}
	}
	if j.gapTicks == 0 {
		j.gapFrom, j.gapAdv, j.gapHolds = j.playTS, 0, j.gapHolds[:0]
		j.gapESN = max(j.gapESN, j.next-1)
	}
	j.gapTicks++
	j.stable = 0
	j.lostRun++
	if j.cur < j.target {
		j.cur++
		j.gapHolds = append(j.gapHolds, j.playTS)
	} else {
		j.gapAdv++
		j.playTS += j.spf
	}
	return nil, PopStatus{Kind: PopLost, Seq: uint16(j.next), LostRun: j.lostRun}
}

// settle tells the undecided underrun ticks apart on a packet (esn, ts) of
// the stream at or after next, played later or come after its slot. The
// sequence numbers missing between the last one accounted for and esn
// are placed just before it, as Pop places them: a tick whose slot lies
// before them was the sender's pause (the timestamp jumped further than
// the sequence number: RFC 3550 5.1), one at their slots or at the
// packet's own slot concealed a loss. Ticks after the packet's slot (it
// came late, in the middle of an underrun) stay undecided for the next
// packet to tell.
func (j *JitterBuffer) settle(esn, ts int64) {
	from := max(j.next, j.gapESN+1)
	missing := int64(0)
	if esn > from {
		// Only [next, next+capacity) can be held: beyond, all are missing.
		end := min(esn, j.next+j.capN)
		missing = esn - end
		for e := from; e < end; e++ {
			if s := j.slot(e); s.esn != e || s.state == slotEmpty || s.state == slotGone {
				missing++
			}
		}
	}
	lossFrom, lossEnd := ts-missing*j.spf, ts+j.spf
	paused := j.gapBelow(lossFrom)
	advDone := j.gapAdvBelow(lossEnd)
	done := advDone
	kept := j.gapHolds[:0]
	for _, h := range j.gapHolds {
		if h < lossEnd {
			done++
		} else {
			kept = append(kept, h)
		}
	}
	j.gapHolds = kept
	j.gapFrom += advDone * j.spf
	j.gapAdv -= advDone
	j.gapTicks -= uint64(done)
	j.stats.Paused += uint64(paused)
	j.stats.Concealed += uint64(done - paused)
	j.gapESN = max(j.gapESN, esn)
}

// concealUndecided counts the undecided ticks concealed: no packet will
// tell them apart.
func (j *JitterBuffer) concealUndecided() {
	j.stats.Concealed += j.gapTicks
	j.gapTicks, j.gapAdv, j.gapHolds = 0, 0, j.gapHolds[:0]
}

// gapBelow counts the undecided ticks whose slot lies before ts.
func (j *JitterBuffer) gapBelow(ts int64) int64 {
	n := j.gapAdvBelow(ts)
	for _, h := range j.gapHolds {
		if h < ts {
			n++
		}
	}
	return n
}

// gapAdvBelow counts the undecided ticks that advanced the clock from a
// slot before ts: the k-th of them played gapFrom + k frames.
func (j *JitterBuffer) gapAdvBelow(ts int64) int64 {
	if ts <= j.gapFrom {
		return 0
	}
	return min((ts-j.gapFrom+j.spf-1)/j.spf, j.gapAdv)
}

// findHeld returns the first held packet at or after esn, or nil.
func (j *JitterBuffer) findHeld(esn int64) *jbSlot {
	if j.held == 0 {
		return nil
	}
	for e := esn; e <= j.highESN && e < esn+j.capN; e++ {
		if s := j.slot(e); s.esn == e && s.state == slotHeld {
			return s
		}
	}
	return nil
}

// prime starts playout once the held packets span the target delay (by
// timestamp or by sequence number, whichever is more). Older packets beyond
// the target are discarded so that playout starts exactly at it;
// sequence numbers skipped that never arrived are lost.
func (j *JitterBuffer) prime() bool {
	low := j.findHeld(j.next)
	if low == nil {
		return false
	}
	span := max((j.refTS-low.ts)/j.spf+1, j.highESN-low.esn+1)
	target := int64(j.target)
	if span < target {
		return false
	}
	// The first frame to keep: the oldest held whose timestamp and
	// sequence number are both within target frames of the newest.
	keepTS := j.refTS - (target-1)*j.spf
	keepESN := j.highESN - (target - 1)
	first := low
	for e := low.esn; e <= j.highESN; e++ {
		if s := j.slot(e); s.esn == e && s.state == slotHeld {
			first = s
			if s.ts >= keepTS && s.esn >= keepESN {
				break
			}
		}
	}
	for e := j.next; e < first.esn; e++ {
		s := j.slot(e)
		switch {
		case s.esn != e || s.state == slotEmpty || s.state == slotGone:
			j.stats.Lost++
		case s.state == slotHeld:
			j.held--
			j.stats.Discarded++
			s.state = slotGone
		default:
			s.state = slotGone
		}
	}
	// Ticks still undecided (a packet came after idling, late for their
	// slots, and nothing since): the clock starts anew, nothing will show
	// a pause there.
	j.concealUndecided()
	j.next = first.esn
	j.playTS = first.ts
	j.cur = j.target
	j.started, j.everStarted = true, true
	j.stable = 0
	return true
}

// Stats returns a snapshot of the counters.
func (j *JitterBuffer) Stats() JitterStats {
	st := j.stats
	st.Delay, st.TargetDelay = j.cur, j.target
	st.Jitter = time.Duration(float64(j.jitter16>>4) / float64(j.cfg.ClockRate) * float64(time.Second))
	st.Held = j.held
	st.HighestSeq = uint32(j.highESN)
	st.Undecided = j.gapTicks
	return st
}
