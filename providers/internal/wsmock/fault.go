package wsmock

import (
	"github.com/brisvox/brisvox/providers/providertest"
)

// Violation is what a FaultProtocol sends.
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

// Fault is one injected failure in the house's one fault vocabulary: a
// providertest.Fault, whose BeforeEvent is the 0-based index, among the
// messages the session sends with Conn.Send, of the message it acts on,
// with what only a websocket can show. The server hands one queued fault
// to each handshake, in order. By kind:
//
//   - FaultReject answers the handshake with Status (and RefuseBody);
//   - FaultConnectStall holds the handshake for Duration (0: until the
//     client goes away or the server closes), then accepts it;
//   - FaultDisconnect cuts the connection, without a close frame, instead
//     of sending message BeforeEvent;
//   - FaultStall holds message BeforeEvent for Duration (0: until the
//     client goes away or the server closes); the session keeps reading;
//   - FaultDelay is a stall for a bounded Duration: message BeforeEvent
//     and every later one arrive Duration late;
//   - FaultProtocol sends Violation instead of message BeforeEvent.
type Fault struct {
	providertest.Fault
	// RefuseBody is the body of FaultReject's answer.
	RefuseBody string
	// Violation is what FaultProtocol sends.
	Violation Violation
	// NoPong makes the session answer no websocket ping from its start
	// until message BeforeEvent is sent (for good under a FaultStall
	// without Duration): a hung server, not only a slow one. Without it
	// the session's reader answers pings whatever the fault holds.
	NoPong bool
}
