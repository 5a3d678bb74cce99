// Package conn is the contract between a call's audio connection and the
// engine: the Conn a transport (SIP/RTP, WebRTC, a carrier's websocket, the
// simulator's loopback) implements and the transport actor drives, its
// optional faces (PlaybackConfirmer, Describer, DTMFReceiver), the
// admission a transport asks for before it takes a call (Admitter,
// Admission, Refusal), the way it ends a call it never started (EndKind),
// and the errors that say why a call ended (ErrClosed with ErrVanished,
// ErrStoppedReading, ErrSilentInput, ErrProtocol; ReasonOf).
//
// It is a leaf: it imports only messages, so the transports under media/
// and sip/ depend on it and not on the actors.
package conn
