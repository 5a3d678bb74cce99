package sdp

import "errors"

// Sentinel errors of the package, wrapped with detail as
// fmt.Errorf("%w: detail", ErrX). The detail never quotes the SDP (it may
// carry addresses and names of the caller's equipment); it says which rule
// the description broke. Each says the SIP response the caller should
// give to a request whose offer fails so; StatusCode maps them.
var (
	// ErrInvalidConfig marks a bad Config or Local (New fails with it).
	ErrInvalidConfig = errors.New("sdp: invalid config")
	// ErrRandom: the session id could not be read from the random source.
	ErrRandom = errors.New("sdp: no randomness for the session id")

	// ErrTooLarge: the description is longer than Config.MaxSize, or has
	// more m-lines than Config.MaxMedia or more formats on one m-line
	// than Config.MaxFormats. Answer 413 (Request Entity Too Large).
	ErrTooLarge = errors.New("sdp: description too large")
	// ErrMalformed: the body is not a valid SDP session description
	// (RFC 4566), or a field we need (c=, a port, a payload type) is
	// unusable. Answer 400 (Bad Request).
	ErrMalformed = errors.New("sdp: malformed description")
	// ErrNoAudio: the offer has no audio stream with a port (only video,
	// text or application streams, or every audio stream disabled).
	// Answer 488 (Not Acceptable Here), Warning 304.
	ErrNoAudio = errors.New("sdp: no audio stream offered")
	// ErrUnsupportedProfile: every audio stream is of a profile other
	// than RTP/AVP and RTP/AVPF (RTP/SAVP, UDP/TLS/RTP/SAVPF: SRTP is not
	// supported), or uses a port range. Answer 488, Warning 302.
	ErrUnsupportedProfile = errors.New("sdp: unsupported media profile")
	// ErrUnsupportedAddress: the audio stream's c= is a host name (we
	// resolve none), a multicast address, a scoped (zoned) address, or of
	// another address family than ours. Answer 488, Warning 301.
	ErrUnsupportedAddress = errors.New("sdp: unsupported connection address")
	// ErrNoCommonCodec: no codec of ours is in the offer (or the answer
	// to our offer rejected our audio stream). Answer 488, Warning 305;
	// Session.Warning says which codecs we accept.
	ErrNoCommonCodec = errors.New("sdp: no codec in common")
	// ErrAnswerMismatch: the answer to our offer does not fit it: another
	// number of m-lines, another profile, or a codec or payload type we
	// did not offer (RFC 3264 §6). An answer comes in a 2xx or an ACK,
	// where nothing can be answered: end the call with BYE.
	ErrAnswerMismatch = errors.New("sdp: answer does not match our offer")
	// ErrNoOffer: AcceptAnswer without an offer of ours waiting for its
	// answer (an SDP in an ACK that answers nothing). End the call with
	// BYE, as for ErrAnswerMismatch.
	ErrNoOffer = errors.New("sdp: no offer of ours awaits an answer")
	// ErrOfferPending: an offer came while ours still waits for its
	// answer (glare, RFC 3264 §4). Answer 491 (Request Pending).
	ErrOfferPending = errors.New("sdp: our offer awaits its answer")
)
