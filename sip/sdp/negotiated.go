package sdp

import (
	"fmt"
	"net/netip"
	"time"
)

// Direction is what an offer/answer allows, seen from our side.
type Direction uint8

// The directions of RFC 3264 §6.1, ours. The zero value is SendRecv.
const (
	// SendRecv: both ends send.
	SendRecv Direction = iota
	// SendOnly: we send, the remote does not (its SDP said recvonly:
	// it put us on hold).
	SendOnly
	// RecvOnly: the remote sends, we do not (its SDP said sendonly, or
	// gave c=0.0.0.0: it put itself on hold, perhaps with music).
	RecvOnly
	// Inactive: neither sends.
	Inactive
)

// String names the direction as an SDP attribute does.
func (d Direction) String() string {
	switch d {
	case SendRecv:
		return "sendrecv"
	case SendOnly:
		return "sendonly"
	case RecvOnly:
		return "recvonly"
	case Inactive:
		return "inactive"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// directionOf is the direction of the sends and receives flags.
func directionOf(send, receive bool) Direction {
	switch {
	case send && receive:
		return SendRecv
	case send:
		return SendOnly
	case receive:
		return RecvOnly
	}
	return Inactive
}

// Send tells whether d lets us send; Receive whether the remote sends.
func (d Direction) Send() bool    { return d == SendRecv || d == SendOnly }
func (d Direction) Receive() bool { return d == SendRecv || d == RecvOnly }

// OpusParams are the remote's Opus format parameters (its a=fmtp, RFC
// 7587 §6.1): what it wants to receive, and what it may send.
type OpusParams struct {
	// FEC: useinbandfec=1, the remote decodes in-band FEC (our encoder
	// may add it).
	FEC bool
	// DTX: usedtx=1, the remote prefers discontinuous transmission.
	DTX bool
	// Stereo: stereo=1, the remote prefers to receive stereo.
	Stereo bool
	// SpropStereo: sprop-stereo=1, the remote may send stereo.
	SpropStereo bool
	// MaxPlaybackRate is maxplaybackrate in Hz (0: not given, 48000).
	MaxPlaybackRate int
	// MaxAverageBitrate is maxaveragebitrate in bit/s (0: not given).
	MaxAverageBitrate int
}

// Negotiated is what one offer/answer exchange settled for the call's
// audio stream: what the RTP layer needs to send, receive and latch.
type Negotiated struct {
	// Codec and PayloadType are the audio format both ends send.
	Codec       Codec
	PayloadType uint8
	// ClockRate is the RTP clock: 8000 for G.711 and G.722, 48000 for
	// Opus. SampleRate is the audio's: 8000 for G.711, 16000 for G.722,
	// 48000 for Opus (whatever maxplaybackrate says: the decoder
	// resamples). Channels is what the remote may send: 1, or 2 for Opus
	// with sprop-stereo=1 (an Opus decoder set up for mono decodes stereo
	// packets too).
	ClockRate, SampleRate, Channels int
	// Opus holds the remote's Opus parameters when Codec is Opus.
	Opus OpusParams
	// HasEvents: telephone-event (RFC 4733) at the codec's clock rate was
	// agreed, with payload type EventPT.
	HasEvents bool
	EventPT   uint8
	// HasCN: comfort noise (RFC 3389) was agreed, with payload type CNPT.
	HasCN bool
	CNPT  uint8
	// Remote is where the remote receives RTP (its c= and m= port). On
	// the old hold form its address is unspecified (0.0.0.0 or ::) and
	// Send is false. RemoteRTCP is where its RTCP goes: a=rtcp when given
	// (RFC 3605), Remote itself with RTCPMux, else Remote's port + 1
	// (zero when that port would be past 65535).
	Remote, RemoteRTCP netip.AddrPort
	// RTCPMux: RTCP shares the RTP port both ways (RFC 5761).
	RTCPMux bool
	// PtimeOut is the packet time we send: the remote's a=ptime when it
	// gave one, else Config.PtimeOut, at most its a=maxptime; always 10
	// to 60 ms in steps of 10 (Opus: 10, 20, 40 or 60). PtimeIn is what
	// the remote is expected to send: its a=ptime, whole ms, clamped to
	// 10 to 60 ms, else the PtimeOut our SDP asked for. It is a hint:
	// the media path must take any packet length of 10 to 60 ms.
	PtimeIn, PtimeOut time.Duration
	// Direction, and Send and Receive, its two halves: Send tells
	// whether we may send (not while the remote holds us); Receive
	// whether the remote will send, so whether a media timeout applies.
	Direction     Direction
	Send, Receive bool
	// Hold: the direction is not sendrecv (one end or both paused).
	Hold bool
	// RemoteChanged: Remote or RemoteRTCP differs from the last
	// negotiated usable one (always true for the first). Only then must
	// the RTP layer learn its strict source latch again. An unspecified
	// hold address is no change: it says "do not send", not "I moved".
	RemoteChanged bool
	// MediaIndex is the index of the audio m-line in use.
	MediaIndex int
}
