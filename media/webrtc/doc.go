// Package webrtc is the browser's way into a call: a WebRTC transport on
// pion/webrtc with its HTTP and websocket signaling. A Server answers
// offers; each accepted offer becomes a Call, handed to Config.OnCall,
// which implements actors/transport.Conn for the engine.
//
// # Signaling
//
// Handler serves, under the prefix the caller mounts it at:
//
//   - POST /offer with {"sdp": "...", "type": "offer"} (application/json,
//     at most MaxOfferBytes). The offer must parse and have an audio
//     m-line offering opus/48000; otherwise 400 (bad JSON or SDP, no
//     audio), 413 (too large) or 415 (not JSON, no Opus), each with a JSON
//     {"error": reason} and a counted reason (Stats). Admission (Admit) and
//     a closed server answer 503. The answer is {"sdp", "type": "answer",
//     "call": id}.
//   - GET /ws?call=<id>: the call's websocket, one per call (a second one
//     is refused with 409, an unknown id with 404). Client to server:
//     {"type":"candidate","candidate":RTCIceCandidateInit or null} and
//     {"type":"bye"}. Server to client: candidates of the same shape (null
//     ends them), {"type":"error","error":reason} for a message it could
//     not take (binary, unknown, unparsable, refused candidate; after
//     MaxBadWSMessages of them the websocket closes with 1008, the call
//     goes on), the live events given to Call.Publish as they were
//     encoded, and {"type":"bye","reason":...} just before it closes at
//     the end of the call.
//
// Trickle is optional for the client. The answer waits for the server's
// candidate gathering to complete, up to GatherTimeout (1 s; host
// candidates take milliseconds, so on a LAN or loopback it always
// completes): the answer then holds every server candidate and a client
// that never opens the websocket connects with the answer alone, provided
// its offer held its own candidates (the browser's after
// icegatheringstate "complete"). Candidates found after the answer are
// trickled over the websocket, as are the client's.
//
// # Media
//
// One Opus track each way, 48 kHz, 20 ms, mono (the media engine offers
// nothing else). Input: the RTP reader pushes into a media.JitterBuffer
// (clock 48000, the negotiated Opus payload type); a 20 ms playout clock
// owned by the call pops, decodes at InputRate (libopus decodes any stream
// at any of its rates; concealment for a lost packet) and queues the frame
// for ReadFrame (bounded by
// InputQueue, oldest dropped and counted). Output: WriteFrame copies the
// frame into a bounded queue (OutputQueue, oldest dropped and counted);
// a sender goroutine takes one frame per 20 ms slot, encodes it as it is
// (an encoder at OutputRate: the stream is still 48 kHz Opus; a band the
// audio cannot hold is not analysed) and writes it to the local track,
// sending encoded
// silence when nothing is queued, so the stream's timestamps keep pace
// with the clock. Clear drops queued frames of older epochs.
//
// Marks: Mark echoes once every frame written before it has been sent,
// that is handed to pion and the socket. What the caller hears is later by
// the network transit and the browser's jitter buffer (NetEq, typically 20
// to 80 ms on a LAN); the echo is early by that much, and nothing in
// WebRTC reports the browser's playout of a given packet back. The pacer's
// LeadMargin covers it.
//
// RTCP: pion's default interceptors are registered (NACK generator and
// responder, sender and receiver reports, stats, TWCC); the call reads
// both RTCP directions so they run, and counts the packets.
//
// # Where media is accepted from
//
// Pion accepts a non-STUN packet only from an address that is a remote
// candidate of the ICE agent: one signaled by the client, or a
// peer-reflexive one learned from a STUN binding request that carried the
// ICE password (pion/ice v4.4.8, candidate_base.go handleInboundPacket ->
// agent.go validateNonSTUNTraffic, which drops the packet and logs
// "Discarded message from ..., not a valid remote candidate"). Beyond
// that, SRTP authenticates every media packet with keys from the DTLS
// handshake, whose certificate fingerprint is the one in the offer. A
// packet from any other socket never reaches the jitter buffer.
//
// # End of a call
//
// A call ends, and ReadFrame returns transport.ErrClosed wrapping the
// reason, when: ICE and DTLS are not connected within ConnectTimeout
// (ErrConnectTimeout); ICE fails before connecting (ErrICEFailed); DTLS
// fails (ErrDTLSFailed); a connected client stops answering consent checks
// for ICEDisconnectedTimeout + ICEFailedTimeout (ErrClientGone); the
// client closes its peer connection or says bye (ErrPeerClosed); the
// server calls Hangup or Close, or closes (ErrHangup). Every goroutine of
// the call stops then; Close waits for them. The websocket closing alone
// does not end a call (a client may not use it at all).
//
// # Logging
//
// Config.Logger receives the package's lines and pion's (through a
// LoggerFactory; pion's info lines at debug). Lines about an error carry
// it and the call id. SDP is never logged (only its length, at debug),
// nor websocket payloads.
package webrtc
