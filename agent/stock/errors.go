package stock

import "errors"

// Refusals of book_table and end_call. (get_time's and save_note's
// sentinels live beside them, in get_time.go and save_note.go.)
var (
	// ErrInvalidBooking: a party size, time or name outside what
	// book_table's schema allows (the tool checks again when called
	// directly).
	ErrInvalidBooking = errors.New("invalid booking")
	// ErrBookingKeyReused: a key already booked a table with other
	// details; nothing is booked.
	ErrBookingKeyReused = errors.New("idempotency key already used for another booking")
	// ErrNoSession: end_call was called without CallInfo.Session, so
	// there is no call to end.
	ErrNoSession = errors.New("no session to end")
	// ErrEndCall: the Ender could not end the call.
	ErrEndCall = errors.New("the call could not be ended")
)

// Refusals of transfer_call and send_dtmf.
var (
	// ErrAllowPattern: an allowlist entry outside the grammar (see
	// Allowlist), or one that would reach too much.
	ErrAllowPattern = errors.New("bad allowlist entry")
	// ErrBadDestination: a transfer destination that is not an E.164
	// number or a sip:/sips: URI, or holds CR, LF, NUL or another byte
	// that could inject a header.
	ErrBadDestination = errors.New("bad destination")
	// ErrNotAllowed: the destination is not in the agent's allowlist;
	// nothing was dialled.
	ErrNotAllowed = errors.New("destination not allowed")
	// ErrTransfer: the transfer failed or is not possible on this call;
	// the call goes on.
	ErrTransfer = errors.New("the transfer failed")
	// ErrBadDigits: send_dtmf's digits are not 1 to 32 of 0-9, *, #, A-D.
	ErrBadDigits = errors.New("bad digits")
	// ErrDTMF: the keys could not be sent.
	ErrDTMF = errors.New("the keys could not be sent")
)
