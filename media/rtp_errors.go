package media

import "errors"

// Errors of the RTP parser and the jitter buffer. ParseRTP and
// JitterBuffer.Push wrap them with the detail of what was wrong, so a caller
// tells them apart with errors.Is.
var (
	// ErrRTPVersion: the version field is not 2; the datagram is not RTP
	// (STUN, DTLS or garbage on the media port).
	ErrRTPVersion = errors.New("media: rtp version is not 2")
	// ErrRTPShort: the datagram ends inside the fixed header or the CSRC list.
	ErrRTPShort = errors.New("media: rtp packet truncated")
	// ErrRTPExtension: the header extension runs past the end of the packet.
	ErrRTPExtension = errors.New("media: rtp header extension out of bounds")
	// ErrRTPPadding: the padding count is zero or larger than the payload.
	ErrRTPPadding = errors.New("media: rtp padding length invalid")
	// ErrRTPPayloadTooLarge: the payload does not fit a jitter buffer slot
	// (JitterConfig.MaxPayload).
	ErrRTPPayloadTooLarge = errors.New("media: rtp payload larger than a jitter buffer slot")
)
