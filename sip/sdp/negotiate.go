package sdp

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	pion "github.com/pion/sdp/v3"
)

// Payload types of our own offers. The static ones are RFC 3551's; the
// dynamic ones are those most stacks use (browsers give Opus 111 and
// telephone-event/48000 110; SIP phones give telephone-event/8000 101).
const (
	offerPTOpus    = 111
	offerPTEvent8  = 101
	offerPTEvent48 = 110
)

// eventFmtp is the telephone-event range we take: the digits, * and #,
// and A to D (RFC 4733 §3.2).
const eventFmtp = "0-15"

// answerOffer negotiates the audio stream of a remote offer: the first
// audio m-line of an RTP/AVP(F) profile that has a codec of ours. It
// returns the result, our formats for that m-line, and the m-line's index.
func (s *Session) answerOffer(sd *pion.SessionDescription) (Negotiated, []ourFormat, int, error) {
	sawAudio, sawRTP := false, false
	var firstErr error
	for i, md := range sd.MediaDescriptions {
		if md.MediaName.Media != "audio" || md.MediaName.Port.Value == 0 {
			continue
		}
		sawAudio = true
		if !rtpProfile(proto(md)) {
			continue
		}
		if r := md.MediaName.Port.Range; r != nil && *r != 1 {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: m-line %d has a port range", ErrUnsupportedProfile, i)
			}
			continue
		}
		sawRTP = true
		n, formats, err := s.answerMedia(sd, md)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("m-line %d: %w", i, err)
			}
			continue
		}
		n.MediaIndex = i
		return n, formats, i, nil
	}
	switch {
	case firstErr != nil:
		return Negotiated{}, nil, 0, firstErr
	case !sawAudio:
		return Negotiated{}, nil, 0, fmt.Errorf("%w: no audio m-line with a port", ErrNoAudio)
	case !sawRTP:
		return Negotiated{}, nil, 0, fmt.Errorf("%w: no audio m-line of RTP/AVP or RTP/AVPF (SRTP is not supported)", ErrUnsupportedProfile)
	}
	return Negotiated{}, nil, 0, fmt.Errorf("%w: no usable audio m-line", ErrNoAudio)
}

// answerMedia negotiates one audio m-line of an offer.
//
// The codec is the first of OUR preference (Config.Codecs) that the offer
// has, not the offerer's first: RFC 3264 §6.1 lets the answerer choose
// among the offered formats, and the preference is the agent's (wideband
// first, for the recogniser); Config.PreferEvents first skips codecs
// without telephone-event. In a re-offer the codec in use wins while it
// is still offered, so that hold, resume or a new address never switch
// the codec (and its decoder and resampler) mid-call.
func (s *Session) answerMedia(sd *pion.SessionDescription, md *pion.MediaDescription) (Negotiated, []ourFormat, error) {
	pls := payloads(md)
	chosen := -1
	if s.negotiated {
		chosen = findCodec(pls, s.cur.Codec)
	}
	if chosen < 0 && s.cfg.PreferEvents && !s.cfg.NoTelephoneEvents {
		for _, c := range s.cfg.Codecs {
			i := findCodec(pls, c)
			if i >= 0 && findFormat(pls, telephoneEvent, pls[i].clock, pls[i].pt) >= 0 {
				chosen = i
				break
			}
		}
	}
	for _, c := range s.cfg.Codecs {
		if chosen >= 0 {
			break
		}
		chosen = findCodec(pls, c)
	}
	if chosen < 0 {
		return Negotiated{}, nil, fmt.Errorf("%w: none of ours is offered", ErrNoCommonCodec)
	}
	p := pls[chosen]
	var n Negotiated
	codec := codecOf(p)
	in, _ := codec.info()
	setCodec(&n, codec, p)
	formats := []ourFormat{{pt: p.pt, name: in.name, clock: in.clock, channels: in.channels}}

	if !s.cfg.NoTelephoneEvents {
		if i := findFormat(pls, telephoneEvent, in.clock, p.pt); i >= 0 {
			n.HasEvents, n.EventPT = true, pls[i].pt
			formats = append(formats, ourFormat{pt: pls[i].pt, name: telephoneEvent, clock: in.clock, fmtp: eventFmtp})
		}
	}
	// Opus has its own DTX and no CN (RFC 7587 §3.1.3).
	if !s.cfg.NoComfortNoise && codec != Opus {
		if i := findFormat(pls, comfortNoise, in.clock, p.pt); i >= 0 {
			n.HasCN, n.CNPT = true, pls[i].pt
			formats = append(formats, ourFormat{pt: pls[i].pt, name: comfortNoise, clock: in.clock})
		}
	}
	if err := s.settle(sd, md, &n, !s.cfg.NoRTCPMux); err != nil {
		return Negotiated{}, nil, err
	}
	return n, formats, nil
}

// acceptAnswer checks the remote answer against our pending offer and
// negotiates its audio stream (RFC 3264 §6, §7): the same m-lines, our
// audio at the same index, only formats we offered at the payload types
// we gave them. The codec is the answer's first: the answerer sends it.
func (s *Session) acceptAnswer(sd *pion.SessionDescription) (Negotiated, error) {
	if len(sd.MediaDescriptions) != len(s.pending) {
		return Negotiated{}, fmt.Errorf("%w: %d m-lines answer an offer of %d", ErrAnswerMismatch, len(sd.MediaDescriptions), len(s.pending))
	}
	for i, md := range sd.MediaDescriptions {
		ours := &s.pending[i]
		if md.MediaName.Media != ours.media || proto(md) != ours.proto {
			return Negotiated{}, fmt.Errorf("%w: m-line %d has another media or profile", ErrAnswerMismatch, i)
		}
		if i != s.pendingAudio && md.MediaName.Port.Value != 0 {
			return Negotiated{}, fmt.Errorf("%w: m-line %d was offered disabled and answered with a port", ErrAnswerMismatch, i)
		}
	}
	md := sd.MediaDescriptions[s.pendingAudio]
	if md.MediaName.Port.Value == 0 {
		return Negotiated{}, fmt.Errorf("%w: the answer rejected our audio", ErrNoCommonCodec)
	}
	if r := md.MediaName.Port.Range; r != nil && *r != 1 {
		return Negotiated{}, fmt.Errorf("%w: the answer gives a port range", ErrAnswerMismatch)
	}
	offered := s.pending[s.pendingAudio].formats
	var pls []payload
	for _, f := range md.MediaName.Formats {
		v, ok := parsePT(f)
		if !ok {
			return Negotiated{}, fmt.Errorf("%w: a format that is not a payload type", ErrAnswerMismatch)
		}
		j := -1
		for k := range offered {
			if offered[k].pt == v {
				j = k
				break
			}
		}
		if j < 0 {
			return Negotiated{}, fmt.Errorf("%w: payload type %d was not offered", ErrAnswerMismatch, v)
		}
		o := offered[j]
		p := payload{pt: v}
		if rtpmapOf(md, &p) && (!strings.EqualFold(p.name, o.name) || p.clock != o.clock) {
			return Negotiated{}, fmt.Errorf("%w: payload type %d answered as another format", ErrAnswerMismatch, v)
		}
		p.name, p.clock, p.channels = o.name, o.clock, o.channels
		p.fmtp = fmtpOf(md, v)
		pls = append(pls, p)
	}
	chosen := -1
	for i, p := range pls {
		if codecOf(p) != "" {
			chosen = i
			break
		}
	}
	if chosen < 0 {
		return Negotiated{}, fmt.Errorf("%w: the answer has no audio codec", ErrNoCommonCodec)
	}
	p := pls[chosen]
	var n Negotiated
	setCodec(&n, codecOf(p), p)
	if i := findFormat(pls, telephoneEvent, p.clock, p.pt); i >= 0 {
		n.HasEvents, n.EventPT = true, pls[i].pt
	}
	mux := s.pending[s.pendingAudio].rtcpMux
	if err := s.settle(sd, md, &n, mux); err != nil {
		return Negotiated{}, err
	}
	n.MediaIndex = s.pendingAudio
	return n, nil
}

// settle reads what the remote's m-line md says of the transport: its
// address, RTCP, direction and packet time. muxOK: we offer or accept
// rtcp-mux.
func (s *Session) settle(sd *pion.SessionDescription, md *pion.MediaDescription, n *Negotiated, muxOK bool) error {
	addr, ok, err := connAddr(md.ConnectionInformation)
	if err != nil {
		return err
	}
	if !ok {
		if addr, ok, err = connAddr(sd.ConnectionInformation); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: no c= line for the audio stream", ErrMalformed)
		}
	}
	hold := addr.IsUnspecified()
	if !hold && addr.Is4() != s.addr.Is4() {
		return fmt.Errorf("%w: the remote's address family is not ours", ErrUnsupportedAddress)
	}
	port := md.MediaName.Port.Value
	n.Remote = netip.AddrPortFrom(addr, uint16(port))

	n.RTCPMux = muxOK && hasAttr(md, "rtcp-mux")
	rtcp, ok, err := rtcpAttr(md, addr)
	switch {
	case err != nil:
		return err
	case n.RTCPMux:
		n.RemoteRTCP = n.Remote
	case ok:
		if !rtcp.Addr().IsUnspecified() && rtcp.Addr().Is4() != s.addr.Is4() {
			return fmt.Errorf("%w: the remote's RTCP address family is not ours", ErrUnsupportedAddress)
		}
		n.RemoteRTCP = rtcp
	case port < 65535:
		n.RemoteRTCP = netip.AddrPortFrom(addr, uint16(port+1))
	}

	d := directionAttr(md.Attributes)
	if d == dirNone {
		d = directionAttr(sd.Attributes)
	}
	// The old hold form (RFC 2543, RFC 3264 §8.4): c=0.0.0.0 means "send
	// me nothing", whatever the attribute says.
	n.Send = d.authorReceives() && !hold
	n.Receive = d.authorSends()
	n.Direction = directionOf(n.Send, n.Receive)
	n.Hold = n.Direction != SendRecv

	asked := msAttr(md, sd, "ptime")
	n.PtimeOut = choosePtime(n.Codec, s.cfg.PtimeOut, asked, msAttr(md, sd, "maxptime"))
	n.PtimeIn = n.PtimeOut
	if asked > 0 {
		n.PtimeIn = min(max(asked, MinPtime), MaxPtime)
	}
	return nil
}

// setCodec fills the codec fields of n from the chosen payload.
func setCodec(n *Negotiated, c Codec, p payload) {
	in, _ := c.info()
	n.Codec, n.PayloadType = c, p.pt
	n.ClockRate, n.SampleRate, n.Channels = in.clock, in.sampleRate, 1
	if c == Opus {
		n.Opus = opusParams(p.fmtp)
		if n.Opus.SpropStereo {
			n.Channels = 2
		}
	}
}

// codecOf names the codec of a payload, or "" for another format.
func codecOf(p payload) Codec {
	for _, c := range defaultCodecs {
		if c.matches(p.name, p.clock, p.channels) {
			return c
		}
	}
	return ""
}

// findCodec is the index of the first payload of codec c, or -1.
func findCodec(pls []payload, c Codec) int {
	for i, p := range pls {
		if c.matches(p.name, p.clock, p.channels) {
			return i
		}
	}
	return -1
}

// findFormat is the index of the first payload named name at clock, other
// than payload type not, or -1.
func findFormat(pls []payload, name string, clock int, not uint8) int {
	for i, p := range pls {
		if p.pt != not && p.clock == clock && strings.EqualFold(p.name, name) {
			return i
		}
	}
	return -1
}

// parsePT reads a format as an RTP payload type.
func parsePT(f string) (uint8, bool) {
	v, rest, ok := ptPrefix(f)
	return v, ok && rest == ""
}

// choosePtime is the packet time we send (see Negotiated.PtimeOut): the
// asked one, else ours, at most maxptime, fitted to the largest size we
// can send that is not above it, and never under 10 ms. A request outside
// 10 to 60 ms is clamped, not refused: a=ptime and a=maxptime are
// preferences (RFC 4566 §6), and a call at the nearest size beats a 488.
func choosePtime(c Codec, ours, asked, maxptime time.Duration) time.Duration {
	want := ours
	if asked > 0 {
		want = asked
	}
	if maxptime > 0 && want > maxptime {
		want = maxptime
	}
	want = min(max(want, MinPtime), MaxPtime)
	want -= want % (10 * time.Millisecond)
	for !validPtimeOut(c, want) {
		want -= 10 * time.Millisecond
	}
	return want
}

// validPtimeOut tells whether we can send codec c in packets of d.
func validPtimeOut(c Codec, d time.Duration) bool {
	if d < MinPtime || d > MaxPtime || d%(10*time.Millisecond) != 0 {
		return false
	}
	// An Opus packet holds frames of 2.5 to 60 ms; 30 and 50 ms are not
	// one frame, and we send one frame a packet.
	return c != Opus || (d != 30*time.Millisecond && d != 50*time.Millisecond)
}
