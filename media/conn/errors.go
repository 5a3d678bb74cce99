package conn

import "errors"

// ErrClosed is returned by a Conn whose call is over (the caller hung up).
var ErrClosed = errors.New("transport: connection closed")

// Why a Conn ended the call without a hangup: ReadFrame returns ErrClosed
// wrapped with one of these, and the call's end reason names it
// (ReasonOf).
var (
	// ErrVanished: the caller is gone without hanging up (no pong within
	// the deadline, ICE consent lost, no media for the media timeout).
	ErrVanished = errors.New("transport: the caller vanished")
	// ErrStoppedReading: the caller keeps the connection but does not
	// read what the call sends (the unsent output passed its bound).
	ErrStoppedReading = errors.New("transport: the caller stopped reading")
	// ErrSilentInput: the caller sent nothing for the input inactivity
	// bound.
	ErrSilentInput = errors.New("transport: no input from the caller")
	// ErrProtocol: the caller broke the transport's protocol (invalid
	// UTF-8, too many bad messages).
	ErrProtocol = errors.New("transport: protocol error")
)

// Call control failures (Transferrer, DTMFSender).
var (
	// ErrTransferFailed: the transfer did not happen; the call goes on.
	ErrTransferFailed = errors.New("transport: transfer failed")
	// ErrNotSupported: this connection cannot do what was asked (a
	// websocket call cannot be transferred).
	ErrNotSupported = errors.New("transport: not supported on this call")
)

// The end reasons ReasonOf gives.
const (
	ReasonHangup         = "hangup"
	ReasonVanished       = "vanished"
	ReasonStoppedReading = "stopped reading"
	ReasonSilentInput    = "no input"
	ReasonProtocol       = "protocol error"
)

// ReasonOf is the end reason of a call whose ReadFrame returned err.
func ReasonOf(err error) string {
	switch {
	case errors.Is(err, ErrVanished):
		return ReasonVanished
	case errors.Is(err, ErrStoppedReading):
		return ReasonStoppedReading
	case errors.Is(err, ErrSilentInput):
		return ReasonSilentInput
	case errors.Is(err, ErrProtocol):
		return ReasonProtocol
	}
	return ReasonHangup
}
