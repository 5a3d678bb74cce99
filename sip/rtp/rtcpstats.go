package rtp

import (
	"time"

	"github.com/pion/rtcp"
)

// ntpEpochOffset is the seconds from 1900 (NTP) to 1970 (Unix).
const ntpEpochOffset = 2208988800

// ntpTime is t as a 64-bit NTP timestamp (RFC 3550 4).
func ntpTime(t time.Time) uint64 {
	ns := t.UnixNano()
	sec := uint64(ns/1e9) + ntpEpochOffset
	frac := uint64(ns%1e9) << 32 / 1e9
	return sec<<32 | frac
}

// ntpMiddle is the middle 32 bits of an NTP timestamp, the unit of LSR.
func ntpMiddle(t time.Time) uint32 { return uint32(ntpTime(t) >> 16) }

// receiveStats is what RFC 3550 A.3 and A.8 keep about the stream we
// receive from the latched source: sequence extension, expected and
// received counts, interarrival jitter. Plain state; the reader updates it.
type receiveStats struct {
	clockRate int
	started   bool
	ssrc      uint32
	baseSeq   uint32
	maxSeq    uint16
	cycles    uint32
	received  uint64
	// At the last report, for the fraction lost over the interval.
	expectedPrior, receivedPrior uint64
	lastFraction                 uint8

	epoch       time.Time
	transit     int64
	haveTransit bool
	jitter      float64 // clock units

	// The remote's last SR: its NTP middle bits and when it arrived.
	lastSR   uint32
	lastSRAt time.Time
}

// reset starts the statistics of a new source (a new latch).
func (r *receiveStats) reset(clockRate int) {
	*r = receiveStats{clockRate: clockRate}
}

// update counts one packet of the latched source.
func (r *receiveStats) update(ssrc uint32, seq uint16, ts uint32, arrival time.Time) {
	if !r.started {
		r.started, r.ssrc = true, ssrc
		r.baseSeq, r.maxSeq = uint32(seq), seq
		r.epoch = arrival
	} else if d := seq - r.maxSeq; d != 0 && d < 1<<15 {
		if seq < r.maxSeq {
			r.cycles += 1 << 16
		}
		r.maxSeq = seq
	}
	r.received++
	el := arrival.Sub(r.epoch)
	units := int64(el/time.Second)*int64(r.clockRate) + int64(el%time.Second)*int64(r.clockRate)/int64(time.Second)
	transit := units - int64(ts)
	if r.haveTransit {
		d := transit - r.transit
		// The timestamp wraps at 2^32: take the difference modulo it.
		d = int64(int32(d))
		if d < 0 {
			d = -d
		}
		r.jitter += (float64(d) - r.jitter) / 16
	}
	r.transit, r.haveTransit = transit, true
}

// extendedMax is the extended highest sequence number received.
func (r *receiveStats) extendedMax() uint32 { return r.cycles + uint32(r.maxSeq) }

// expected is how many packets the sequence numbers say were sent.
func (r *receiveStats) expected() uint64 {
	if !r.started {
		return 0
	}
	return uint64(r.extendedMax()) - uint64(r.baseSeq) + 1
}

// cumulativeLost may be negative with duplicates (RFC 3550 6.4.1).
func (r *receiveStats) cumulativeLost() int64 { return int64(r.expected()) - int64(r.received) }

// jitterDuration is the interarrival jitter as a duration.
func (r *receiveStats) jitterDuration() time.Duration {
	if r.clockRate == 0 {
		return 0
	}
	return time.Duration(r.jitter / float64(r.clockRate) * float64(time.Second))
}

// report makes the reception report block at now and starts the next
// interval; ok is false before the first packet.
func (r *receiveStats) report(now time.Time) (rtcp.ReceptionReport, bool) {
	if !r.started {
		return rtcp.ReceptionReport{}, false
	}
	exp := r.expected()
	expInt := exp - r.expectedPrior
	recInt := r.received - r.receivedPrior
	r.expectedPrior, r.receivedPrior = exp, r.received
	var fraction uint8
	if expInt > 0 && expInt > recInt {
		fraction = uint8((expInt - recInt) << 8 / expInt)
	}
	r.lastFraction = fraction
	lost := r.cumulativeLost()
	// The field is 24-bit signed; pion takes it unsigned: clamp to
	// [0, 2^23-1] (a negative count says nothing useful to the sender).
	lost = min(max(lost, 0), 1<<23-1)
	rr := rtcp.ReceptionReport{
		SSRC:               r.ssrc,
		FractionLost:       fraction,
		TotalLost:          uint32(lost),
		LastSequenceNumber: r.extendedMax(),
		Jitter:             uint32(r.jitter),
	}
	if !r.lastSRAt.IsZero() {
		rr.LastSenderReport = r.lastSR
		rr.Delay = uint32(now.Sub(r.lastSRAt) * 65536 / time.Second)
	}
	return rr, true
}

// remoteView is what the remote's reports say about our stream.
type remoteView struct {
	have         bool
	fractionLost float64
	totalLost    uint32
	jitter       time.Duration
	rtt          time.Duration
}

// fromReport takes the remote's reception report about our stream, which
// arrived at now; clockRate is our stream's.
func (v *remoteView) fromReport(rr rtcp.ReceptionReport, now time.Time, clockRate int) {
	v.have = true
	v.fractionLost = float64(rr.FractionLost) / 256
	v.totalLost = rr.TotalLost
	if clockRate > 0 {
		v.jitter = time.Duration(float64(rr.Jitter) / float64(clockRate) * float64(time.Second))
	}
	if rr.LastSenderReport != 0 {
		// RFC 3550 6.4.1: RTT = A - LSR - DLSR, in 1/65536 s.
		a := ntpMiddle(now)
		if d := a - rr.LastSenderReport - rr.Delay; d < 1<<31 {
			v.rtt = time.Duration(d) * time.Second / 65536
		}
	}
}
