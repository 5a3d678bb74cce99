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
