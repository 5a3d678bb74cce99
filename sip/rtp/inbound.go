package rtp

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/pion/rtcp"
)

// inbound is the decision state of the input path before playout: the
// latch, the demux of RTCP, telephone events and comfort noise, the
// receive statistics, the ptime detection, and the jitter buffer it feeds.
// Plain state with explicit times; the session guards it with in.mu.
type inbound struct {
	latch latch
	rx    receiveStats
	jb    *media.JitterBuffer
	jcfg  media.JitterConfig

	pt, eventPT uint8
	events      bool
	mux         bool
	clockRate   int
	// ptime is the remote's packet time; the latching packet's duration
	// replaces the signalled one (sipp signals none and sends 30 ms).
	ptime   time.Duration
	samples func([]byte) int

	// live is what the media timeout watches.
	live liveness

	ourSSRC  uint32
	ourClock int
	rtcpFrom netip.AddrPort
	remote   remoteView

	onEvent EventFunc
	// relay, when set, takes the latched source's media instead of the
	// jitter buffer and onEvent (a bridge); receive leaves the packet in
	// relayPkt with relayed set, for the caller to hand over unlocked.
	relay    func(RelayedPacket)
	relayed  bool
	relayPkt RelayedPacket
	stats    *counters
	pkt      media.RTPPacket
}

// configure applies negotiated parameters (Start, Update): a new jitter
// buffer, and learning again from the signalled address.
func (in *inbound) configure(p Params, base media.JitterConfig, samples func([]byte) int, now time.Time) error {
	j := base
	j.ClockRate = p.ClockRate
	j.SamplesPerFrame = samplesAt(p.ClockRate, p.PtimeIn)
	// Comfort noise is played by the jitter buffer like audio, so its
	// packets hold their slots (no loss, no concealment of the speech
	// before it); the clock plays them as silence.
	j.PayloadTypes = []uint8{p.PayloadType, payloadTypeCN, payloadTypeCNOld}
	if j.MaxPayload == 0 && p.Codec != CodecOpus {
		j.MaxPayload = g7xxMaxPayload
	}
	jb, err := media.NewJitterBuffer(j)
	if err != nil {
		return fmt.Errorf("%w: jitter buffer: %w", ErrInvalidParams, err)
	}
	in.jb, in.jcfg = jb, j
	in.pt, in.eventPT, in.events = p.PayloadType, p.EventPayloadType, p.Events
	in.mux, in.clockRate, in.ptime = p.RTCPMux, p.ClockRate, p.PtimeIn
	in.samples = samples
	in.latch.reset(p.RemoteRTP)
	in.rx.reset(p.ClockRate)
	in.live.lastRTP, in.live.dir = now, p.Direction
	return nil
}

// isRTCPType: on a muxed port, RTCP's second byte is its packet type, SR
// to XR (RFC 5761 4), which no audio payload type reaches with or without
// the marker bit.
func isRTCPType(b byte) bool { return b >= 200 && b <= 207 }

// receive handles one datagram from src that arrived at now, on the RTCP
// socket when rtcpSocket. It never keeps b.
func (in *inbound) receive(b []byte, src netip.AddrPort, now time.Time, rtcpSocket bool) {
	src = unmap(src)
	if rtcpSocket || (in.mux && len(b) >= 2 && isRTCPType(b[1])) {
		in.receiveRTCP(b, src, now, !rtcpSocket)
		return
	}
	if in.jb == nil {
		in.stats.drop(dropNoRemote)
		return
	}
	p := &in.pkt
	if err := media.ParseRTP(b, p); err != nil {
		in.stats.drop(dropMalformed)
		return
	}
	if p.SSRC == in.ourSSRC {
		// Our own stream reflected: learning from it would lock the
		// call onto the bot's voice.
		in.stats.drop(dropLoop)
		return
	}
	ok, latched, cause := in.latch.checkRTP(src, p.SSRC, p.SequenceNumber)
	if !ok {
		in.stats.drop(cause)
		if cause == dropLearning && src == in.latch.signalled {
			in.live.lastRTP = now
		}
		return
	}
	if latched {
		in.rx.reset(in.clockRate)
		if p.PayloadType == in.pt {
			in.detectPtime(p.Payload)
		}
	}
	in.live.lastRTP = now
	if in.relay != nil {
		switch {
		case p.PayloadType == in.pt || isCN(p.PayloadType):
		case in.events && p.PayloadType == in.eventPT:
			in.relayPkt.Event = true
		default:
			in.stats.drop(dropPayloadType)
			return
		}
		in.relayPkt.PayloadType = p.PayloadType
		in.relayPkt.Seq, in.relayPkt.TS, in.relayPkt.Marker = p.SequenceNumber, p.Timestamp, p.Marker
		in.relayPkt.Payload = p.Payload
		in.relayPkt.At = now
		in.relayed = true
		in.stats.inc(cPacketsIn)
		in.stats.add(cBytesIn, uint64(len(b)))
		in.rx.update(p.SSRC, p.SequenceNumber, p.Timestamp, now)
		return
	}
	switch {
	case p.PayloadType == in.pt:
	case in.events && p.PayloadType == in.eventPT:
		in.stats.inc(cEvents)
		if in.onEvent != nil {
			in.onEvent(p.SequenceNumber, p.Timestamp, p.Marker, p.Payload, now)
		} else {
			in.stats.inc(cEventsUnhandled)
		}
	case isCN(p.PayloadType):
		// Comfort noise is never decoded as speech: the clock plays
		// its slot as silence.
		in.stats.inc(cCN)
	default:
		// Not negotiated: dropped, but the jitter buffer skips its
		// sequence number rather than count it lost.
		in.stats.drop(dropPayloadType)
		_ = in.jb.Push(b, now)
		return
	}
	if err := in.jb.Push(b, now); err != nil {
		in.stats.drop(dropBuffer)
		return
	}
	in.stats.inc(cPacketsIn)
	in.stats.add(cBytesIn, uint64(len(b)))
	in.rx.update(p.SSRC, p.SequenceNumber, p.Timestamp, now)
}

// detectPtime rebuilds the jitter buffer for the latching packet's
// duration when it differs from the signalled ptime and lies in 10-60 ms.
func (in *inbound) detectPtime(payload []byte) {
	if in.samples == nil {
		return
	}
	units := in.samples(payload)
	d := time.Duration(units) * time.Second / time.Duration(in.clockRate)
	if units <= 0 || units == in.jcfg.SamplesPerFrame || d < MinPtime || d > MaxPtime {
		return
	}
	j := in.jcfg
	j.SamplesPerFrame = units
	jb, err := media.NewJitterBuffer(j)
	if err != nil {
		return
	}
	in.jb, in.jcfg, in.ptime = jb, j, d
	in.stats.inc(cPtimeDetected)
}

// receiveRTCP takes the remote's reports: the LSR of its SR for our
// reports, and what its report blocks say about our stream.
func (in *inbound) receiveRTCP(b []byte, src netip.AddrPort, now time.Time, muxed bool) {
	if !in.latch.checkRTCP(src, muxed) {
		in.stats.drop(dropRTCPForeign)
		return
	}
	pkts, err := rtcp.Unmarshal(b)
	if err != nil {
		in.stats.inc(cRTCPMalformed)
		return
	}
	in.stats.inc(cRTCPIn)
	in.rtcpFrom = src
	in.live.lastRTCP = now
	for _, pk := range pkts {
		switch r := pk.(type) {
		case *rtcp.SenderReport:
			if !in.latch.locked || r.SSRC == in.latch.ssrc {
				in.rx.lastSR, in.rx.lastSRAt = uint32(r.NTPTime>>16), now
			}
			in.fromReports(r.Reports, now)
		case *rtcp.ReceiverReport:
			in.fromReports(r.Reports, now)
		case *rtcp.Goodbye:
			in.stats.inc(cRTCPBye)
		}
	}
}

func (in *inbound) fromReports(rrs []rtcp.ReceptionReport, now time.Time) {
	for _, rr := range rrs {
		if rr.SSRC == in.ourSSRC {
			in.remote.fromReport(rr, now, in.ourClock)
		}
	}
}
