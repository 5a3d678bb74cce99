package sdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
)

// Session is the offer/answer state of one SIP dialog (RFC 3264): our o=
// line's session id and version, the last description we sent, an offer
// of ours waiting for its answer, and the last negotiated result. It is
// not safe for concurrent use: the dialog's own goroutine (or actor) owns
// it. A failed Answer or AcceptAnswer changes nothing: the session goes on
// as negotiated before (RFC 3264 §8).
type Session struct {
	cfg   Config
	local Local
	addr  netip.Addr // our c= and o= address

	id, version uint64
	sent        []byte // what followed o= in the last SDP we sent
	hasSent     bool

	// shape is the m-lines of the last exchange, audio at audioIndex: a
	// new offer of ours keeps them (RFC 3264 §8: no fewer m-lines, in the
	// same order).
	shape      []ourMedia
	audioIndex int
	offerFmts  []ourFormat // every format we offer, fixed by the config

	// pending is our offer awaiting its answer, audio at pendingAudio.
	pending      []ourMedia
	pendingAudio int

	cur        Negotiated
	negotiated bool
	lastRemote netip.AddrPort // the last usable remote RTP and RTCP
	lastRTCP   netip.AddrPort // (zero before the first)
}

// New starts the offer/answer of one call whose RTP socket is local. The
// session id is read from the random source (WithRand; crypto/rand by
// default). The error wraps ErrInvalidConfig or ErrRandom.
func New(cfg Config, local Local, opts ...Option) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := local.validate(cfg.PublicAddr); err != nil {
		return nil, err
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	var b [8]byte
	if _, err := io.ReadFull(o.rand, b[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRandom, err)
	}
	s := &Session{
		cfg:   cfg,
		local: local,
		addr:  local.Addr.Addr().Unmap(),
		// 62 bits: some stacks read the id as a signed 64-bit number.
		id:      binary.BigEndian.Uint64(b[:]) >> 2,
		version: 1,
	}
	if cfg.PublicAddr.IsValid() {
		s.addr = cfg.PublicAddr.Unmap()
	}
	s.offerFmts = offerFormats(cfg)
	return s, nil
}

// offerFormats is what our offers propose: every codec of the config in
// its order, then telephone-event at each clock rate in use.
func offerFormats(c Config) []ourFormat {
	var out []ourFormat
	has8k, has48k := false, false
	for _, codec := range c.Codecs {
		in, _ := codec.info()
		pt := uint8(in.staticPT)
		if in.staticPT < 0 {
			pt = offerPTOpus
		}
		out = append(out, ourFormat{pt: pt, name: in.name, clock: in.clock, channels: in.channels})
		has8k = has8k || in.clock == 8000
		has48k = has48k || in.clock == 48000
	}
	if !c.NoTelephoneEvents {
		if has48k {
			out = append(out, ourFormat{pt: offerPTEvent48, name: telephoneEvent, clock: 48000, fmtp: eventFmtp})
		}
		if has8k {
			out = append(out, ourFormat{pt: offerPTEvent8, name: telephoneEvent, clock: 8000, fmtp: eventFmtp})
		}
	}
	return out
}

// offerFormats is what Offer proposes now. After an exchange, the codec
// and telephone-event in use keep their payload types, and no other
// format takes a payload type the exchange gave another meaning: RFC 3264
// §8.3.2 forbids remapping a payload type within a session.
func (s *Session) offerFormats() []ourFormat {
	if !s.negotiated {
		return s.offerFmts
	}
	cur := &s.cur
	out := slices.Clone(s.offerFmts)
	var taken [128]bool
	taken[cur.PayloadType] = true
	if cur.HasEvents {
		taken[cur.EventPT] = true
	}
	if cur.HasCN {
		taken[cur.CNPT] = true
	}
	kept := make([]bool, len(out))
	for i := range out {
		f := &out[i]
		switch {
		case codecOf(payload{name: f.name, clock: f.clock, channels: f.channels}) == cur.Codec:
			f.pt, kept[i] = cur.PayloadType, true
		case cur.HasEvents && f.name == telephoneEvent && f.clock == cur.ClockRate:
			f.pt, kept[i] = cur.EventPT, true
		}
	}
	for i := range out {
		if kept[i] {
			continue
		}
		if !taken[out[i].pt] {
			taken[out[i].pt] = true
			continue
		}
		// A dynamic payload type nothing uses (96 to 127, RFC 3551 §3);
		// at most 7 formats compete for 32 numbers.
		for pt := 96; pt < 128; pt++ {
			if !taken[pt] {
				out[i].pt, taken[pt] = uint8(pt), true
				break
			}
		}
	}
	return out
}

// Answer answers a remote offer (in an INVITE, a re-INVITE or an UPDATE):
// it returns our answer and what was negotiated. Every m-line of the offer
// gets one in the answer, in order; all but the chosen audio stream are
// refused with port 0. On error nothing changes; StatusCode(err) is the
// response to give, and Warning(err) its Warning header.
func (s *Session) Answer(offer []byte) ([]byte, Negotiated, error) {
	if s.pending != nil {
		return nil, Negotiated{}, fmt.Errorf("%w: an offer came before the answer to ours", ErrOfferPending)
	}
	sd, err := parse(offer, &s.cfg)
	if err != nil {
		return nil, Negotiated{}, err
	}
	n, formats, chosen, err := s.answerOffer(sd)
	if err != nil {
		return nil, Negotiated{}, err
	}
	media := make([]ourMedia, len(sd.MediaDescriptions))
	for i, md := range sd.MediaDescriptions {
		m := &media[i]
		m.media, m.proto = md.MediaName.Media, proto(md)
		if i != chosen {
			m.rejected = md.MediaName.Formats
			if len(m.rejected) == 0 {
				m.rejected = []string{"0"}
			}
			continue
		}
		m.port = int(s.local.Addr.Port())
		m.formats = formats
		m.ptime = n.PtimeOut
		m.rtcpMux = n.RTCPMux
		if !n.RTCPMux {
			m.rtcpPort = s.rtcpPortAttr()
		}
		m.direction = n.Direction
	}
	body := s.emit(media)
	s.shape, s.audioIndex = media, chosen
	s.commit(&n)
	return body, n, nil
}

// Offer is our offer: for an INVITE that came without one (the offer goes
// in our 2xx, the answer comes in the ACK), or for a re-INVITE or UPDATE
// of ours. It proposes every configured codec and telephone-event,
// sendrecv; after an exchange it keeps that exchange's m-lines, the
// refused ones at port 0. Until AcceptAnswer or CancelOffer, Offer returns
// the same description (same version) and Answer refuses offers with
// ErrOfferPending.
func (s *Session) Offer() []byte {
	audio := ourMedia{
		media:     "audio",
		port:      int(s.local.Addr.Port()),
		proto:     "RTP/AVP",
		formats:   s.offerFormats(),
		ptime:     s.cfg.PtimeOut,
		rtcpMux:   !s.cfg.NoRTCPMux,
		rtcpPort:  s.rtcpPortAttr(),
		direction: SendRecv,
	}
	media, idx := []ourMedia{audio}, 0
	if s.shape != nil {
		media, idx = slices.Clone(s.shape), s.audioIndex
		audio.proto = media[idx].proto
		media[idx] = audio
	}
	body := s.emit(media)
	s.pending, s.pendingAudio = media, idx
	return body
}

// AcceptAnswer reads the remote's answer to our pending Offer and returns
// what was negotiated. The error wraps ErrNoOffer, ErrAnswerMismatch, or a
// parse or negotiation error; the offer then stays pending (CancelOffer
// drops it) and the session as it was.
func (s *Session) AcceptAnswer(answer []byte) (Negotiated, error) {
	if s.pending == nil {
		return Negotiated{}, fmt.Errorf("%w", ErrNoOffer)
	}
	sd, err := parse(answer, &s.cfg)
	if err != nil {
		return Negotiated{}, err
	}
	n, err := s.acceptAnswer(sd)
	if err != nil {
		return Negotiated{}, err
	}
	s.shape, s.audioIndex = s.pending, s.pendingAudio
	s.pending = nil
	s.commit(&n)
	return n, nil
}

// PreviewAnswer negotiates an early answer to our pending Offer (the SDP
// of a 18x without reliability, RFC 3261 13.2.1) and returns what it
// would give, leaving the offer pending: the final answer (the 200's)
// still goes to AcceptAnswer. Errors as AcceptAnswer's.
func (s *Session) PreviewAnswer(answer []byte) (Negotiated, error) {
	if s.pending == nil {
		return Negotiated{}, fmt.Errorf("%w", ErrNoOffer)
	}
	sd, err := parse(answer, &s.cfg)
	if err != nil {
		return Negotiated{}, err
	}
	return s.acceptAnswer(sd)
}

// CancelOffer drops our pending offer: its transaction failed or was
// refused, and the session stays as negotiated before (RFC 3264 §8).
func (s *Session) CancelOffer() { s.pending = nil }

// Current is the last negotiated result; ok false before the first.
func (s *Session) Current() (n Negotiated, ok bool) { return s.cur, s.negotiated }

// Accepted lists the codecs we accept, our preference first.
func (s *Session) Accepted() []Codec { return slices.Clone(s.cfg.Codecs) }

// warnAgent names us in Warning headers (RFC 3261 §20.43: a pseudonym
// instead of the host).
const warnAgent = "brisvox"

// Warning is the Warning header value (RFC 3261 §20.43) for a 488 that
// refuses an offer with err, saying what we accept; "" for an error that
// has none.
func (s *Session) Warning(err error) string {
	switch {
	case errors.Is(err, ErrNoCommonCodec):
		f := make([]string, len(s.cfg.Codecs))
		for i, c := range s.cfg.Codecs {
			f[i] = c.Format()
		}
		return `305 ` + warnAgent + ` "Incompatible media format: we accept ` + strings.Join(f, " ") + `"`
	case errors.Is(err, ErrUnsupportedProfile):
		return `302 ` + warnAgent + ` "Incompatible transport protocol: we accept RTP/AVP and RTP/AVPF"`
	case errors.Is(err, ErrNoAudio):
		return `304 ` + warnAgent + ` "Media type not available: we accept audio"`
	case errors.Is(err, ErrUnsupportedAddress):
		fam := "IPv4"
		if !s.addr.Is4() {
			fam = "IPv6"
		}
		return `301 ` + warnAgent + ` "Incompatible network address formats: we accept ` + fam + ` unicast literals"`
	}
	return ""
}

// StatusCode is the SIP response to a request whose offer failed with err
// (see the sentinels): 400, 413, 488 or 491; 0 for nil and for the errors
// of an answer (ErrAnswerMismatch, ErrNoOffer), which come in a 2xx or an
// ACK and are answered by ending the call with BYE; 500 for another error.
func StatusCode(err error) int {
	switch {
	case err == nil, errors.Is(err, ErrAnswerMismatch), errors.Is(err, ErrNoOffer):
		return 0
	case errors.Is(err, ErrTooLarge):
		return 413
	case errors.Is(err, ErrMalformed):
		return 400
	case errors.Is(err, ErrNoAudio), errors.Is(err, ErrUnsupportedProfile),
		errors.Is(err, ErrUnsupportedAddress), errors.Is(err, ErrNoCommonCodec):
		return 488
	case errors.Is(err, ErrOfferPending):
		return 491
	}
	return 500
}

// rtcpPortAttr is the port for our a=rtcp line, or 0 when RTCP is on the
// RTP port + 1 and needs none.
func (s *Session) rtcpPortAttr() int {
	p := s.local.RTCPPort
	if p == 0 || p == s.local.Addr.Port()+1 {
		return 0
	}
	return int(p)
}

// emit writes our description of media. The version moves only when what
// follows o= differs from the last SDP we sent (RFC 3264 §8).
func (s *Session) emit(media []ourMedia) []byte {
	body := appendSessionBody(make([]byte, 0, 512), s.cfg.SessionName, s.addr, media)
	if s.hasSent && !bytes.Equal(body, s.sent) {
		s.version++
	}
	s.sent, s.hasSent = body, true
	out := appendHead(make([]byte, 0, len(body)+80), s.id, s.version, s.addr)
	return append(out, body...)
}

// commit makes n the current result and sets its RemoteChanged.
func (s *Session) commit(n *Negotiated) {
	if n.Remote.Addr().IsUnspecified() {
		n.RemoteChanged = !s.lastRemote.IsValid()
	} else {
		n.RemoteChanged = n.Remote != s.lastRemote || n.RemoteRTCP != s.lastRTCP
		s.lastRemote, s.lastRTCP = n.Remote, n.RemoteRTCP
	}
	s.cur, s.negotiated = *n, true
}
