// Package sip is the SIP transport of brisvox serve: a SIP trunk (or a
// PBX, or a softphone) dials in, the engine answers, and the call's audio
// runs over our own RTP sockets into the same actor tree as every other
// transport.
//
// The subpackages follow the protocol's layers, bottom to top:
//
//   - sip/trunk: who may call (CIDR allowlist, per-source rate limits,
//     scanner user agents, per-source dialog limits, digest
//     authentication), decided before a request grows any state.
//   - sip/sdp: the SDP offer/answer (pion/sdp): codecs, ptime,
//     telephone-event, rtcp and rtcp-mux, direction (hold).
//   - sip/dtmf: the caller's key presses from RFC 4733 telephone-events
//     and from SIP INFO bodies.
//   - sip/rtp: one call's RTP and RTCP session: a UDP socket from the
//     configured port range, the strict source latch, the jitter buffer,
//     the codecs, the media timeout.
//   - sip/signal: the user agent server on sipgo (signalling only):
//     transports, request validation before any handler, dialogs,
//     re-INVITE and UPDATE, session timers, retransmissions.
//
// This package ties them together: its Call is a served call's
// connection (conn.Conn), made from one answered INVITE.
//
// Admission is a reservation: Invite asks Config.Admit for a slot before
// any media is set up (a refusal is 503 with Retry-After) and the slot
// ends exactly once: released when the INVITE fails or the dialog ends
// before the ACK (Call.Close), taken by the server when the ACK starts
// the call. A caller gone without a BYE (the media timeout, the session
// timer's expiry) ends its call "vanished": ReadFrame wraps
// conn.ErrVanished.
package sip
