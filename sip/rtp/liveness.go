package rtp

import "time"

// heldBound is the shortest media timeout of a held call: RFC 3550
// 6.3.5 takes a participant for gone after five report intervals, and
// the shortest interval a remote may use is 5 s (6.2), randomised up to
// 1.5 times that; a timeout shorter than this would cut a held call
// between two of its reports.
const heldBound = 5 * 5 * time.Second

// liveness is what the media timeout watches: when the remote last gave
// a sign of life, and which signs count.
//
// In a call both sides speak in (sendrecv) the remote sends RTP all the
// time, at least comfort noise: RTP alone counts. On hold (any other
// direction, which way round) RTP is not due, so a call is not cut for
// its absence: RTCP goes on during a hold (RFC 3264 5.1, RFC 3550 6), so
// a remote that sent RTCP and then fell silent for the bound (at least
// heldBound) is gone. A remote that never sent RTCP gives nothing to
// judge it by while held: its call is not cut by the media timeout (the
// session timer, RFC 4028, still ends a dialog nobody refreshes).
type liveness struct {
	// lastRTP is when the latched source (or one learning from the
	// signalled address) last sent RTP; the start of media and every
	// new offer/answer count as such a sign.
	lastRTP time.Time
	// lastRTCP is when the remote's last accepted RTCP came; zero until
	// the first.
	lastRTCP time.Time
	dir      Direction
}

// timedOut reports whether the remote gave no sign that counts for the
// timeout at now, and for how long.
func (l liveness) timedOut(now time.Time, timeout time.Duration) (bool, time.Duration) {
	if timeout <= 0 {
		return false, 0
	}
	if l.dir == SendRecv {
		quiet := now.Sub(l.lastRTP)
		return quiet >= timeout, quiet
	}
	if l.lastRTCP.IsZero() {
		return false, 0
	}
	last := l.lastRTCP
	if l.lastRTP.After(last) {
		last = l.lastRTP
	}
	quiet := now.Sub(last)
	return quiet >= max(timeout, heldBound), quiet
}

// held reports whether the call is on hold (either side's).
func (l liveness) held() bool { return l.dir != SendRecv }
