package rtp

import (
	"time"
)

// RelayedPacket is one packet of the latched source's media handed to a
// relay (sip/bridge) instead of the jitter buffer: its header fields and
// payload. Payload is the reader's buffer: valid only during the call.
type RelayedPacket struct {
	// PayloadType is the packet's; Event tells a telephone-event, else
	// it is audio (or comfort noise).
	PayloadType uint8
	Event       bool
	Seq         uint16
	TS          uint32
	Marker      bool
	Payload     []byte
	// At is the arrival time.
	At time.Time
}

// SetRelay switches the inbound media of the session to fn (a bridge):
// every audio, comfort noise and telephone-event packet of the latched
// source goes to fn, called from the session's reader goroutine with no
// lock of the session held, instead of the jitter buffer and OnEvent
// (ReadFrame then gets silence). The latch, the receive statistics, RTCP
// and the media timeout go on as before. fn must not block nor keep the
// payload. nil returns to the normal mode.
func (s *Session) SetRelay(fn func(RelayedPacket)) {
	s.in.mu.Lock()
	s.in.st.relay = fn
	s.in.mu.Unlock()
}

// SetRelayOutput switches the output of the session: on, the clock sends
// none of the engine's audio nor silence (its queue waits) and Relay's
// packets go out in their place, on our own stream; off, the engine's
// audio again, its timestamps running on from the relayed ones.
func (s *Session) SetRelayOutput(on bool) {
	o := &s.out
	o.cmu.Lock()
	defer o.cmu.Unlock()
	if on == o.relaying {
		return
	}
	o.relaying = on
	if on {
		o.relayBase, o.relayHave = o.ts, false
		return
	}
	if o.relayHave {
		o.ts = o.relayLast + o.tsStep
	}
	o.first = true
}

// Relay sends p (from the other session of a bridge) on our stream: our
// SSRC, our next sequence number, its timestamp moved onto ours (the
// offset fixed at the first relayed packet), its marker kept (and set on
// the first), audio at our payload type and events at our event payload
// type. It needs SetRelayOutput(true) and the same codec on both sides;
// it reports whether the packet went out (false: not relaying, on hold,
// an event we did not negotiate, a send error). It allocates nothing.
func (s *Session) Relay(p RelayedPacket) bool {
	o := &s.out
	o.cmu.Lock()
	defer o.cmu.Unlock()
	if !o.relaying || o.enc == nil || !o.send || len(p.Payload) > maxPayload {
		s.stats.inc(cRelayDropped)
		return false
	}
	pt := o.pt
	if p.Event {
		if !o.events {
			s.stats.inc(cRelayDropped)
			return false
		}
		pt = o.eventPT
	} else if isCN(p.PayloadType) {
		pt = p.PayloadType
	}
	marker := p.Marker
	if !o.relayHave {
		o.relayHave, o.relaySrc, o.relayLast, marker = true, p.TS, o.relayBase, true
	}
	ts := o.relayBase + (p.TS - o.relaySrc)
	n := copy(o.packet[12:], p.Payload)
	save := o.ts
	o.ts = ts
	ok := s.writePacket(pt, marker, ts, n, p.At)
	o.ts = save
	if ok {
		if int32(ts-o.relayLast) > 0 {
			o.relayLast = ts
		}
		s.stats.inc(cRelayed)
	}
	return ok
}
