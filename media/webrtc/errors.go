package webrtc

import (
	"errors"
	"fmt"

	"github.com/brisvox/brisvox/media/conn"
)

// The sentinel errors of the package. Every error it returns wraps one of
// them; the signaling handlers map them to HTTP statuses (see statusOf), and
// a Call's end reason (Err, and what ReadFrame wraps with
// conn.ErrClosed) is one of the call-end sentinels.
var (
	// ErrInvalidConfig is wrapped by every Config.Validate error.
	ErrInvalidConfig = errors.New("webrtc: invalid config")

	// ErrOfferTooLarge: the offer body is longer than Config.MaxOfferBytes
	// (413).
	ErrOfferTooLarge = errors.New("webrtc: offer too large")
	// ErrBadOffer: the offer body is not the JSON object {"sdp","type"}
	// or its type is not "offer" (400).
	ErrBadOffer = errors.New("webrtc: bad offer")
	// ErrBadSDP: the offer's SDP is empty, does not parse, or is refused
	// by the peer connection (400).
	ErrBadSDP = errors.New("webrtc: bad offer sdp")
	// ErrNoAudio: the offer has no audio m-line (400).
	ErrNoAudio = errors.New("webrtc: offer has no audio")
	// ErrNoOpus: the offer's audio offers no Opus at 48 kHz (415).
	ErrNoOpus = errors.New("webrtc: offer has no opus")
	// ErrContentType: the offer is not sent as application/json (415).
	ErrContentType = errors.New("webrtc: offer is not json")
	// ErrServerClosed: the server is closed (503, cause draining).
	ErrServerClosed = errors.New("webrtc: server closed")
	// ErrOrigin: the request comes from a page of an origin that is not
	// the server's and not in Config.AllowedOrigins (403).
	ErrOrigin = errors.New("webrtc: origin not allowed")
	// ErrUnknownCall: no live call has the id a websocket asked for (404).
	ErrUnknownCall = errors.New("webrtc: unknown call")
	// ErrWSTaken: the call already had its websocket (409).
	ErrWSTaken = errors.New("webrtc: call already has a websocket")
	// ErrBadMessage: a websocket message is not one the server knows.
	ErrBadMessage = errors.New("webrtc: bad websocket message")

	// ErrConnectTimeout ends a call whose ICE and DTLS were not both
	// connected within Config.ConnectTimeout: the client went (or never
	// could come) before connecting. It wraps conn.ErrVanished.
	ErrConnectTimeout = fmt.Errorf("webrtc: connect timeout: %w", conn.ErrVanished)
	// ErrICEFailed ends a call whose ICE checks failed before it
	// connected: no path to the client. It wraps conn.ErrVanished.
	ErrICEFailed = fmt.Errorf("webrtc: ice failed: %w", conn.ErrVanished)
	// ErrDTLSFailed ends a call whose DTLS handshake or transport failed.
	ErrDTLSFailed = errors.New("webrtc: dtls failed")
	// ErrClientGone ends a connected call whose client stopped answering
	// (ICE consent lost: disconnected, then failed). It wraps
	// conn.ErrVanished.
	ErrClientGone = fmt.Errorf("webrtc: client gone: %w", conn.ErrVanished)
	// ErrNoMedia ends a connected call whose client sent no RTP for
	// Config.MediaTimeout. It wraps conn.ErrVanished.
	ErrNoMedia = fmt.Errorf("webrtc: no media from the client: %w", conn.ErrVanished)
	// ErrStalled ends a call whose client stopped reading its websocket:
	// a write was blocked for Config.WSWriteTimeout. It wraps
	// conn.ErrStoppedReading.
	ErrStalled = fmt.Errorf("webrtc: websocket not read: %w", conn.ErrStoppedReading)
	// ErrInvalidUTF8 ends a call whose client sent a websocket text
	// message that is not UTF-8 (the websocket closes with 1007; a
	// browser cannot send one). It wraps conn.ErrProtocol.
	ErrInvalidUTF8 = fmt.Errorf("webrtc: websocket text is not utf-8: %w", conn.ErrProtocol)
	// ErrPeerClosed ends a call the client hung up: a DTLS close, the peer
	// connection closed from the far side, or a "bye" on the websocket.
	ErrPeerClosed = errors.New("webrtc: caller hung up")
	// ErrHangup ends a call the server hung up (Hangup, Close, or the
	// server closing).
	ErrHangup = errors.New("webrtc: hung up")

	// ErrFrameSize: WriteFrame got a frame that is not 20 ms at OutputRate.
	ErrFrameSize = errors.New("webrtc: wrong frame size")
	// ErrQueueFull: Mark found too many marks waiting behind queued audio.
	ErrQueueFull = errors.New("webrtc: queue full")
	// ErrEncode: Publish got a value encoding/json cannot encode.
	ErrEncode = errors.New("webrtc: event not encodable")
)
