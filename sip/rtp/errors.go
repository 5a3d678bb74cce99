package rtp

import "errors"

// The sentinel errors of the package. Every error it returns wraps one of
// them; a Session's end reason (Err, and what ReadFrame wraps with
// conn.ErrClosed) is ErrMediaTimeout or ErrClosed.
var (
	// ErrInvalidConfig is wrapped by every Config.Validate and
	// PortsConfig.Validate error.
	ErrInvalidConfig = errors.New("rtp: invalid config")
	// ErrInvalidParams: Start or Update got remote parameters that cannot
	// work (an unknown codec, a ptime outside 10-60 ms, a rate the codec
	// does not have, RTCP on its own port when only one was bound).
	ErrInvalidParams = errors.New("rtp: invalid remote parameters")
	// ErrNoPorts: every port pair of the range is in use or busy; the
	// caller answers 503.
	ErrNoPorts = errors.New("rtp: no free port in the range")
	// ErrBind: a socket of the range could not be bound for another reason
	// than a busy port (a local address not on this host).
	ErrBind = errors.New("rtp: bind failed")
	// ErrState: Start was called twice, or Update before Start.
	ErrState = errors.New("rtp: wrong session state")
	// ErrFrameSize: WriteFrame got a frame that is not 20 ms at OutputRate.
	ErrFrameSize = errors.New("rtp: wrong frame size")
	// ErrQueueFull: Mark found too many marks waiting behind queued audio.
	ErrQueueFull = errors.New("rtp: queue full")
	// ErrMediaTimeout ends a session whose remote gave no sign of life
	// for Config.MediaTimeout (no RTP in a sendrecv call; no RTP nor
	// RTCP on hold). ReadFrame then wraps conn.ErrVanished too.
	ErrMediaTimeout = errors.New("rtp: media timeout")
	// ErrClosed ends a session that was closed (Close, the call hung up).
	ErrClosed = errors.New("rtp: session closed")
	// ErrCodec: a codec could not be set up.
	ErrCodec = errors.New("rtp: codec")
	// ErrNoTelephoneEvent: SendDTMF on a call whose peer did not offer
	// telephone-event (RFC 4733); the caller sends SIP INFO instead.
	ErrNoTelephoneEvent = errors.New("rtp: no telephone-event negotiated")
)
