package dtmf

import (
	"fmt"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// maxMisorder is how far (in sequence numbers) behind the newest packet a
// packet may arrive and still count as reordered rather than as a jump of
// the stream (RFC 3550's MAX_MISORDER).
const maxMisorder = 100

// maxDuration is the largest duration field: an event that lasts longer
// goes on in a new segment with a new timestamp (RFC 4733 2.5.1.3).
const maxDuration = 0xFFFF

// MaxPressDuration caps a reported press's Duration: an event chained
// over more segments than an hour is reported as an hour long.
const MaxPressDuration = time.Hour

// recentEvents is how many ended events' timestamps a Detector remembers,
// so their late packets are recognised and ignored.
const recentEvents = 4

// ended is an ended event the Detector remembers.
type ended struct {
	ts   uint32
	last time.Time
}

// event is the telephone-event the Detector is following.
type event struct {
	ts       uint32
	code     int
	first    time.Time // arrival of its first packet seen
	last     time.Time // arrival of its latest packet
	dur      uint16    // the largest duration field of the current segment
	base     uint64    // the durations of its earlier segments (a long press)
	reported bool      // reported (or, for a non-key, dropped) already
	nonKey   bool      // code 16 or more: counted, never reported
}

// Detector turns one RTP stream's telephone-event packets (RFC 4733) into
// key presses, each reported once. Feed it every packet of the stream's
// telephone-event payload type, in arrival order, with Packet; call Expire
// when Deadline says, to report a press whose end packets were all lost.
//
// How packets become presses:
//   - An event is its RTP timestamp: a packet with a new timestamp starts a
//     new event (the marker bit is set on a first packet, but the first
//     packets may be lost, so it is not required). Its first packet may
//     carry duration 0.
//   - A press is reported when its event ends: at its first end packet (E
//     bit; the usual three copies count once, later packets of it are
//     Repeats), when a newer event begins before any end packet came
//     (Unended), or EndTimeout after its last packet (Expired, via Expire).
//     A press whose start packets were lost (only end packets seen) is one
//     press.
//   - A packet of an older event arriving after a newer one began (an
//     ended event's timestamp, or a timestamp and sequence number just
//     behind the newest) is ignored (Late). A sequence number more than 100
//     away from the newest is a jump of the stream, not reordering: sipp's
//     recordings jump between presses, backwards too. A packet with an
//     ended event's timestamp that has the marker bit and comes EndTimeout
//     or more after that event's last packet is a new press: the same
//     recording played twice.
//   - An event that reaches the largest duration (0xFFFF) and goes on with
//     the same code in a new timestamp, without the marker bit, is the same
//     press (RFC 4733 long-duration segments).
//   - Events 0-15 are the keys 0-9 * # A-D; events from 16 on (flash,
//     tones) are counted (NonKey) and never reported.
//   - When a payload packs several event blocks (RFC 4733 2.5.1.5: the end
//     of an older event before the first report of the packet's new one),
//     the last block, the packet's own event, is the one used; an older
//     event that only shows up in such a block is reported when the newer
//     one begins, with the duration last seen.
//
// A press is a messages.DTMF with Source DTMFRFC4733, At the arrival of the
// event's first packet seen, and Duration from the duration field at the
// configured clock rate.
//
// A Detector serves one stream from one goroutine; Stats may be read from
// any goroutine.
type Detector struct {
	cfg     Config
	have    bool // cur holds an event
	cur     event
	recent  [recentEvents]ended
	nrecent int
	next    int // where the next ended timestamp goes in recent
	haveSeq bool
	maxSeq  uint16
	stats   counters
}

// New returns a Detector for one stream.
func New(cfg Config) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Detector{cfg: cfg.withDefaults()}, nil
}

// Packet feeds one telephone-event packet: its RTP sequence number,
// timestamp and marker bit, its payload, and its arrival time. It appends
// the presses this packet completes to dst (none, one, or two when it
// begins a new event while the previous one is unreported and ends at
// once) and returns the slice; pass a slice with room for two (a
// [2]messages.DTMF's [:0]) and it allocates nothing. A press that was due
// to expire by at is appended first, so presses come out in order even
// when Expire is called late. A payload that is not a whole number of
// 4-byte blocks is counted and refused with ErrMalformedPayload; dst is
// then returned unchanged.
func (d *Detector) Packet(dst []messages.DTMF, seq uint16, ts uint32, marker bool, payload []byte, at time.Time) ([]messages.DTMF, error) {
	if len(payload) == 0 || len(payload)%4 != 0 {
		d.stats.malformed.Add(1)
		return dst, fmt.Errorf("%w: %d bytes", ErrMalformedPayload, len(payload))
	}
	d.stats.packets.Add(1)
	if n := len(payload) / 4; n > 1 {
		d.stats.packed.Add(uint64(n - 1))
	}
	block := payload[len(payload)-4:]
	code := int(block[0])
	end := block[1]&0x80 != 0
	dur := uint16(block[2])<<8 | uint16(block[3])

	if press, ok := d.Expire(at); ok {
		dst = append(dst, press)
	}
	same := d.have && ts == d.cur.ts && !(d.cur.reported && d.restarts(d.cur.last, marker, at))
	late := !same && d.isLate(seq, ts, marker, at)
	d.trackSeq(seq)
	switch {
	case late:
		d.stats.late.Add(1)
		return dst, nil
	case !same:
		dst = d.begin(dst, ts, code, marker, dur, at)
	}
	c := &d.cur
	c.last = at
	if dur > c.dur {
		c.dur = dur
	}
	if c.reported {
		d.stats.repeats.Add(1)
		return dst, nil
	}
	if end {
		dst = d.report(dst)
	}
	return dst, nil
}

// restarts reports whether a packet carrying the timestamp of an ended
// event whose latest packet came at last is a new press after all: it has
// the marker bit and comes EndTimeout or more later. A recording replayed
// twice (sipp scenarios do) repeats every header; a real duplicate or a
// late end packet has no marker and comes at once.
func (d *Detector) restarts(last time.Time, marker bool, at time.Time) bool {
	return marker && at.Sub(last) >= d.cfg.EndTimeout
}

// isLate reports whether a packet with a timestamp other than the current
// event's belongs to an older event: an ended one it remembers, or one
// whose sequence number is just behind the newest (within maxMisorder)
// and whose timestamp is older than the current event's.
func (d *Detector) isLate(seq uint16, ts uint32, marker bool, at time.Time) bool {
	if !d.have {
		return false
	}
	for i := range d.nrecent {
		if r := d.recent[i]; r.ts == ts {
			return !d.restarts(r.last, marker, at)
		}
	}
	if ts == d.cur.ts {
		return false // the current event, restarting
	}
	behind := int16(d.maxSeq - seq)
	return behind > 0 && behind <= maxMisorder && int32(ts-d.cur.ts) < 0
}

// trackSeq moves the newest sequence number on: forward, or anywhere on a
// jump beyond the reordering window.
func (d *Detector) trackSeq(seq uint16) {
	delta := int16(seq - d.maxSeq)
	if !d.haveSeq || delta > 0 || delta < -maxMisorder {
		d.maxSeq = seq
		d.haveSeq = true
	}
}

// begin starts following the event of a packet with a new timestamp,
// reporting the previous event first if it never ended, or continuing it
// when the packet is its next long-duration segment.
func (d *Detector) begin(dst []messages.DTMF, ts uint32, code int, marker bool, dur uint16, at time.Time) []messages.DTMF {
	if d.have {
		prev := &d.cur
		d.remember(prev.ts, prev.last)
		if !marker && code == prev.code && prev.dur == maxDuration {
			d.stats.segments.Add(1)
			prev.base += maxDuration
			prev.ts, prev.dur = ts, dur
			return dst
		}
		if !prev.reported && !prev.nonKey {
			d.stats.unended.Add(1)
			dst = d.report(dst)
		}
	}
	_, isKey := keyOfEvent(code)
	d.cur = event{ts: ts, code: code, first: at, last: at, dur: dur, nonKey: !isKey}
	d.have = true
	if !isKey {
		d.stats.nonKey.Add(1)
	}
	return dst
}

// remember records an ended event's timestamp and latest arrival.
func (d *Detector) remember(ts uint32, last time.Time) {
	d.recent[d.next] = ended{ts: ts, last: last}
	d.next = (d.next + 1) % recentEvents
	d.nrecent = min(d.nrecent+1, recentEvents)
}

// report marks the current event reported and appends its press (none for
// a non-key event).
func (d *Detector) report(dst []messages.DTMF) []messages.DTMF {
	c := &d.cur
	c.reported = true
	key, ok := keyOfEvent(c.code)
	if !ok {
		return dst
	}
	d.stats.presses.Add(1)
	// A hostile stream can chain segments without end; the duration is
	// capped (at MaxPressDuration) before it could overflow.
	units := min(c.base+uint64(c.dur), uint64(MaxPressDuration/time.Second)*uint64(d.cfg.ClockRate))
	return append(dst, messages.DTMF{
		Digit:    key,
		Source:   messages.DTMFRFC4733,
		Duration: time.Duration(units) * time.Second / time.Duration(d.cfg.ClockRate),
		At:       c.first,
	})
}

// Deadline is when Expire should be called next: EndTimeout after the
// latest packet of a key event that has not ended; ok is false when no
// press is waiting for its end.
func (d *Detector) Deadline() (deadline time.Time, ok bool) {
	if !d.have || d.cur.reported || d.cur.nonKey {
		return time.Time{}, false
	}
	return d.cur.last.Add(d.cfg.EndTimeout), true
}

// Expire reports the current event's press when EndTimeout has passed
// since its latest packet without an end packet (Stats.Expired); ok is
// false when nothing is due at now.
func (d *Detector) Expire(now time.Time) (press messages.DTMF, ok bool) {
	deadline, waiting := d.Deadline()
	if !waiting || now.Before(deadline) {
		return messages.DTMF{}, false
	}
	var one [1]messages.DTMF
	out := d.report(one[:0])
	if len(out) == 0 {
		return messages.DTMF{}, false
	}
	d.stats.expired.Add(1)
	return out[0], true
}
