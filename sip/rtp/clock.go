package rtp

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// maxTickLag: a clock that fell further behind (descheduled) skips the
// ticks it missed instead of running them back to back.
const maxTickLag = 5 * messages.FrameDuration

// clock is the session's media clock from Start to the end: playout at the
// remote's packet time, sending at ours, RTCP reports, and the media
// timeout. One goroutine does all of them, so a call wakes once per tick.
func (s *Session) clock() {
	now := time.Now()
	nextIn := now.Add(DefaultPtime)
	nextOut := now // the first packet opens the NAT binding at once
	nextRTCP := now.Add(s.rtcpInterval())
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
		case <-s.wake:
		case <-s.done:
			return
		}
		now = time.Now()
		if !now.Before(nextIn) {
			ptime, live := s.in.tick(now)
			nextIn = s.advance(nextIn, ptime, now)
			if out, quiet := live.timedOut(now, s.cfg.MediaTimeout); out {
				what := "rtp"
				if live.held() {
					what = "rtp or rtcp on hold"
				}
				s.end(fmt.Errorf("%w: no %s for %v", ErrMediaTimeout, what, quiet.Round(time.Millisecond)))
				return
			}
		}
		if !now.Before(nextOut) {
			nextOut = s.advance(nextOut, s.outputTick(now), now)
		}
		if !now.Before(nextRTCP) {
			s.sendReport(now, false)
			nextRTCP = now.Add(s.rtcpInterval())
		}
		timer.Reset(minTime(minTime(nextIn, nextOut), nextRTCP).Sub(now))
	}
}

// minTime is the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (s *Session) advance(next time.Time, period time.Duration, now time.Time) time.Time {
	next = next.Add(period)
	if now.Sub(next) > maxTickLag {
		s.stats.inc(cTickLag)
		next = now.Add(period)
	}
	return next
}

// rtcpInterval is Config.RTCPInterval times a uniform factor in [0.5, 1.5)
// (RFC 3550 6.3.1), drawn from the session's random source.
func (s *Session) rtcpInterval() time.Duration {
	var b [4]byte
	if _, err := s.rand.Read(b[:]); err != nil {
		return s.cfg.RTCPInterval
	}
	f := 0.5 + float64(binary.BigEndian.Uint32(b[:]))/(1<<32)
	return time.Duration(f * float64(s.cfg.RTCPInterval))
}
