package wsmock

import (
	"fmt"
	"time"
)

// FaultKind says how a fault breaks a session.
type FaultKind int

// The fault kinds; the zero kind is no fault.
const (
	// FaultRefuse answers the handshake with Status (and RefuseBody).
	FaultRefuse FaultKind = iota + 1
	// FaultConnectStall holds the handshake for Duration (0: until the
	// client goes away or the server closes), then accepts it.
	FaultConnectStall
	// FaultDrop cuts the connection, without a close frame, instead of
	// sending message Before.
	FaultDrop
	// FaultStall holds message Before for Duration (0: until the client
	// goes away or the server closes). The session keeps reading.
	FaultStall
	// FaultDelay is FaultStall for a bounded Duration: message Before and
	// every later one arrive Duration late.
	FaultDelay
	// FaultViolate sends Violation instead of message Before.
	FaultViolate
)

// String names the kind for test failures.
func (k FaultKind) String() string {
	switch k {
	case FaultRefuse:
		return "refuse"
	case FaultConnectStall:
		return "connect-stall"
	case FaultDrop:
		return "drop"
	case FaultStall:
		return "stall"
	case FaultDelay:
		return "delay"
	case FaultViolate:
		return "violate"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Violation is what FaultViolate sends.
type Violation int

// The violations.
const (
	// ViolateMalformed sends a text message that is not JSON.
	ViolateMalformed Violation = iota
	// ViolateBinary sends a binary message where text is expected.
	ViolateBinary
	// ViolateOversized sends a text message of OversizedBytes bytes.
	ViolateOversized
)

// OversizedBytes is the size of the ViolateOversized message: over every
// adapter's read limit.
const OversizedBytes = 4 << 20

// Fault is one injected failure. The server hands one queued fault to
// each handshake, in order.
type Fault struct {
	Kind FaultKind
	// Status and RefuseBody are FaultRefuse's answer.
	Status     int
	RefuseBody string
	// Before is the 0-based index, among the messages the session sends
	// with Conn.Send, of the message the fault acts on.
	Before int
	// Duration is how long FaultConnectStall, FaultStall and FaultDelay
	// hold.
	Duration time.Duration
	// Violation is what FaultViolate sends.
	Violation Violation
	// NoPong makes the session answer no websocket ping from its start
	// until message Before is sent (for good under a FaultStall without
	// Duration): a hung server, not only a slow one. Without it the
	// session's reader answers pings whatever the fault holds.
	NoPong bool
}
