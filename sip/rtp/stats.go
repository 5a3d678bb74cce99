package rtp

import (
	"net/netip"
	"time"

	"github.com/brisvox/brisvox/media"
)

// Stats is a snapshot of a session, for the operator's Describe and for
// Prometheus. The counters only grow; Jitter and the RTCP figures about
// the stream we receive are those of the current source: every Update
// learns the source again and starts them anew.
type Stats struct {
	// Local is our RTP address.
	Local netip.AddrPort
	// Latched tells that a source is locked; Source is it.
	Latched bool
	Source  netip.AddrPort
	// LocalSSRC is our stream's, RemoteSSRC the latched source's.
	LocalSSRC, RemoteSSRC uint32
	Codec                 Codec
	PayloadType           uint8
	Direction             Direction
	// PtimeIn is the remote's packet time (detected from its packets
	// when they differ from what it signalled), PtimeOut ours.
	PtimeIn, PtimeOut time.Duration

	PacketsIn, BytesIn   uint64
	PacketsOut, BytesOut uint64
	// Drops counts the inbound datagrams dropped, by cause:
	// malformed, unsignalled_source, learning, candidates_full,
	// foreign_address, foreign_ssrc, payload_type, rtcp_foreign, no_remote,
	// jitter_refused.
	Drops map[string]uint64
	// CN counts comfort noise packets (played as silence), Events
	// telephone-event packets, EventsUnhandled those without an OnEvent.
	CN, Events, EventsUnhandled uint64
	// PtimeDetected counts the jitter buffers rebuilt for the packet time
	// the remote actually sends.
	PtimeDetected uint64
	// The jitter buffer's counters: late, duplicate, reordered, lost,
	// concealed, paused (the sender's silence, no loss) and undecided.
	Jitter media.JitterStats

	// OutputDropped counts bot frames dropped from a full queue,
	// InputDropped caller frames ReadFrame was too slow for; SendGaps
	// talk spurts that ran dry; HoldPackets packet times not sent on hold;
	// SilencePackets silence sent while idle.
	OutputDropped, InputDropped, SendGaps, HoldPackets, SilencePackets uint64
	DecodeErrors, EncodeErrors, SendErrors, ReadErrors                 uint64
	TickLag                                                            uint64
	// EventsSent counts the telephone-event packets SendDTMF sent,
	// DigitsSent the digits (events) begun, DTMFSends the sends finished.
	EventsSent, DigitsSent, DTMFSends uint64
	// Relayed counts the packets a bridge sent on our stream (Relay),
	// RelayDropped those it could not.
	Relayed, RelayDropped uint64

	RTCP RTCPStats
}

// RTCPStats are the RTCP figures: ours about the stream we receive, and
// what the remote's reports say about ours.
type RTCPStats struct {
	ReportsIn, ReportsOut, Malformed, Byes uint64
	// FractionLost (0 to 1) is the loss of the last report interval,
	// CumulativeLost the packets missing since the start (negative with
	// duplicates), Jitter the RFC 3550 interarrival jitter, all of the
	// stream we receive.
	FractionLost   float64
	CumulativeLost int64
	Jitter         time.Duration
	// RemoteReported tells that the remote reported on our stream; the
	// Remote fields are what it said, RTT the round trip from its LSR/DLSR.
	RemoteReported       bool
	RemoteFractionLost   float64
	RemoteCumulativeLost uint32
	RemoteJitter         time.Duration
	RTT                  time.Duration
}

// Stats returns a snapshot of the session's counters and figures.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	p := s.params
	s.mu.Unlock()
	st := Stats{
		Local:       s.local,
		LocalSSRC:   s.out.ssrc,
		Codec:       p.Codec,
		PayloadType: p.PayloadType,
		Direction:   p.Direction,
		PtimeOut:    p.PtimeOut,
		Drops:       make(map[string]uint64, nDrops),
	}
	c := &s.stats
	for i := range nDrops {
		st.Drops[dropNames[i]] = c.drops[i].Load()
	}
	st.PacketsIn, st.BytesIn = c.get(cPacketsIn), c.get(cBytesIn)
	st.PacketsOut, st.BytesOut = c.get(cPacketsOut), c.get(cBytesOut)
	st.CN, st.Events, st.EventsUnhandled = c.get(cCN), c.get(cEvents), c.get(cEventsUnhandled)
	st.PtimeDetected = c.get(cPtimeDetected)
	st.OutputDropped, st.InputDropped, st.SendGaps = c.get(cOutputDropped), c.get(cInputDropped), c.get(cSendGaps)
	st.HoldPackets, st.SilencePackets = c.get(cHoldFrames), c.get(cSilencePackets)
	st.DecodeErrors, st.EncodeErrors, st.SendErrors, st.ReadErrors = c.get(cDecodeErrors), c.get(cEncodeErrors), c.get(cSendErrors), c.get(cReadErrors)
	st.TickLag = c.get(cTickLag)
	st.Relayed, st.RelayDropped = c.get(cRelayed), c.get(cRelayDropped)
	st.EventsSent, st.DigitsSent, st.DTMFSends = c.get(cEventsSent), c.get(cDigitsSent), c.get(cDTMFSends)
	st.RTCP.ReportsIn, st.RTCP.ReportsOut = c.get(cRTCPIn), c.get(cRTCPOut)
	st.RTCP.Malformed, st.RTCP.Byes = c.get(cRTCPMalformed), c.get(cRTCPBye)

	in := &s.in
	in.mu.Lock()
	st.Latched, st.Source = in.st.latch.locked, in.st.latch.src
	if st.Latched {
		st.RemoteSSRC = in.st.latch.ssrc
	}
	st.PtimeIn = in.st.ptime
	if in.st.jb != nil {
		st.Jitter = in.st.jb.Stats()
	}
	rx := &in.st.rx
	st.RTCP.FractionLost = float64(rx.lastFraction) / 256
	st.RTCP.CumulativeLost = rx.cumulativeLost()
	st.RTCP.Jitter = rx.jitterDuration()
	rv := in.st.remote
	in.mu.Unlock()
	st.RTCP.RemoteReported = rv.have
	st.RTCP.RemoteFractionLost, st.RTCP.RemoteCumulativeLost = rv.fractionLost, rv.totalLost
	st.RTCP.RemoteJitter, st.RTCP.RTT = rv.jitter, rv.rtt
	return st
}
