package sip

import "errors"

// Errors of the SIP transport.
var (
	// ErrInvalidConfig reports a Config that cannot work.
	ErrInvalidConfig = errors.New("sip: invalid config")
	// ErrMediaTimeout ends a call whose caller sent no RTP for the
	// configured time (the dialog is ended with a BYE).
	ErrMediaTimeout = errors.New("sip: media timeout")
	// ErrHangup is the cause of a BYE we sent because the call's tree
	// ended it (end_call, an operator, the drain, a failed stage).
	ErrHangup = errors.New("sip: the call was ended by the engine")
	// ErrUnknownTrunk: a dial named no configured trunk.
	ErrUnknownTrunk = errors.New("sip: unknown trunk")
	// ErrInvalidDial: a dial request that cannot be placed (a bad
	// number, caller id or ring timeout).
	ErrInvalidDial = errors.New("sip: invalid dial request")
	// ErrDialLimited: a trunk's max_calls or calls_per_second refused
	// a new outbound call (nothing was sent).
	ErrDialLimited = errors.New("sip: outbound call limit reached")
)
