package rtp

import (
	"net/netip"
	"time"

	"github.com/pion/rtcp"
)

// rtcpState is the clock's RTCP bookkeeping.
type rtcpState struct {
	reports    uint64
	sentAtLast uint32 // our packet count at the last report
}

// buildReport makes our compound RTCP packet at now: an SR when we sent
// since the last report, else an RR, with a report block about the
// latched source when it sent, then SDES CNAME, then BYE when bye.
func (s *Session) buildReport(now time.Time, bye bool) ([]byte, error) {
	o := &s.out
	o.cmu.Lock()
	ssrc, sent, octets, lastTS, lastAt, clock := o.ssrc, o.sentPackets, o.sentOctets, o.lastTS, o.lastSentAt, o.clockRate
	o.cmu.Unlock()

	s.in.mu.Lock()
	rr, haveRR := s.in.st.rx.report(now)
	s.in.mu.Unlock()
	var blocks []rtcp.ReceptionReport
	if haveRR {
		blocks = []rtcp.ReceptionReport{rr}
	}

	s.rmu.Lock()
	sender := sent != s.rtcp.sentAtLast
	s.rtcp.sentAtLast = sent
	s.rtcp.reports++
	s.rmu.Unlock()

	var first rtcp.Packet
	if sender {
		rtpNow := lastTS + uint32(int64(now.Sub(lastAt))*int64(clock)/int64(time.Second))
		first = &rtcp.SenderReport{SSRC: ssrc, NTPTime: ntpTime(now), RTPTime: rtpNow, PacketCount: sent, OctetCount: octets, Reports: blocks}
	} else {
		first = &rtcp.ReceiverReport{SSRC: ssrc, Reports: blocks}
	}
	pkts := []rtcp.Packet{first, &rtcp.SourceDescription{Chunks: []rtcp.SourceDescriptionChunk{{
		Source: ssrc,
		Items:  []rtcp.SourceDescriptionItem{{Type: rtcp.SDESCNAME, Text: s.cname}},
	}}}}
	if bye {
		pkts = append(pkts, &rtcp.Goodbye{Sources: []uint32{ssrc}})
	}
	return rtcp.Marshal(pkts)
}

// sendReport sends our report (and BYE when bye) to the remote's RTCP
// address: the RTP socket with rtcp-mux, the RTCP socket otherwise.
func (s *Session) sendReport(now time.Time, bye bool) {
	b, err := s.buildReport(now, bye)
	if err != nil {
		s.log.Warn().Err(err).Str("call_id", s.cfg.CallID).Msg("rtcp report not built")
		return
	}
	conn, dest := s.rtcpDest()
	if !dest.IsValid() {
		return
	}
	if _, err := conn.WriteToUDPAddrPort(b, dest); err != nil {
		s.stats.inc(cSendErrors)
		return
	}
	s.stats.inc(cRTCPOut)
}

// sendBye ends our stream (RFC 3550 6.6) when the session closes.
func (s *Session) sendBye(now time.Time) { s.sendReport(now, true) }

// rtcpDest is where our RTCP goes: the signalled RTCP address, or with
// symmetric RTP where the remote's RTCP comes from.
func (s *Session) rtcpDest() (packetConn, netip.AddrPort) {
	s.mu.Lock()
	p := s.params
	s.mu.Unlock()
	s.in.mu.Lock()
	from := s.in.st.rtcpFrom
	latched, src := s.in.st.latch.locked, s.in.st.latch.src
	s.in.mu.Unlock()
	dest := p.RemoteRTCP
	if s.cfg.SymmetricRTP {
		switch {
		case from.IsValid():
			dest = from
		case p.RTCPMux && latched:
			dest = src
		}
	}
	if p.RTCPMux || s.rtcpConn == nil {
		return s.rtpConn, dest
	}
	return s.rtcpConn, dest
}

// latchedSource is the locked source, for symmetric RTP's sending.
func (s *Session) latchedSource() (netip.AddrPort, bool) {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return s.in.st.latch.src, s.in.st.latch.locked
}
