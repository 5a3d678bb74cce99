// Package webrtc is the browser's way into a call: a WebRTC transport on
// pion/webrtc with its HTTP and websocket signaling. A Server answers
// offers; each accepted offer becomes a Call, handed to Config.OnCall,
// which implements actors/conn.Conn for the engine.
//
// # Signaling
//
// Handler serves, under the prefix the caller mounts it at:
//
//   - POST /offer with {"sdp": "...", "type": "offer"} (application/json,
//     at most MaxOfferBytes). The offer must parse, have an audio m-line
//     offering opus/48000 and at most 50 candidates; otherwise 400 (bad
//     JSON or SDP, no audio), 413 (too large) or 415 (not JSON, no Opus),
//     each with a JSON {"error": reason} and a counted reason (Stats). The
//     answer is {"sdp", "type": "answer", "call": id}.
//   - Admission: a slot is reserved (Config.Admit) before the body is
//     read, and released on every path that makes no call of the offer
//     (a bad offer, the client gone while the answer waited for
//     gathering); with the call it goes to the server (Call.Admission),
//     which frees it when the call ends. A refusal, and a closed server,
//     answer 503 with Retry-After (seconds) and {"error": reason,
//     "cause": "full" | "draining" | "resource" | "rate_limited"}. Refusals
//     are counted by cause and logged only as a summary per second
//     (internal/ratelog), as are offers that fail after admission.
//   - Origins: a request whose Origin is neither the server's own host
//     nor listed in AllowedOrigins gets 403 {"error": ...} naming the
//     setting, before any slot is reserved: on /offer, on its CORS
//     preflight (OPTIONS /offer, answered 204 with
//     Access-Control-Allow-Origin echoing a listed origin, Vary: Origin)
//     and on the websocket. A request without an Origin (not a browser)
//     passes: tokens are the gate's business, in front of this handler.
//   - GET /ws?call=<id>: the call's websocket, one per call (a second one
//     is refused with 409, an unknown id with 404). Client to server:
//     {"type":"candidate","candidate":RTCIceCandidateInit or null} and
//     {"type":"bye"}. Server to client: candidates of the same shape (null
//     ends them), {"type":"error","error":reason} for a message it could
//     not take (binary, unknown, unparsable, refused candidate, beyond 50
//     candidates; after MaxBadWSMessages of them the websocket closes with
//     1008, the call goes on), the live events given to Call.Publish as they were
//     encoded, and {"type":"bye","reason":...} just before it closes at
//     the end of the call: with 1000, or with the code of Hangup's kind
//     (1013 try again later, never 1000, for a call the server did not
//     take or keep for capacity or a drain; 1011 internal; 1001 going
//     away when the server closes).
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
// RTCP: of pion's default interceptors the sender and receiver reports
// are registered (NACK is negotiated for video only, GetStats is never
// called, TWCC's per-packet stamps and 100 ms feedback buy a bandwidth
// estimate a voice stream does not need); the call reads both RTCP
// directions so they run, and counts the packets.
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
// A call ends, and ReadFrame returns conn.ErrClosed wrapping the
// reason (conn.ReasonOf names it), when: ICE and DTLS are not
// connected within ConnectTimeout (ErrConnectTimeout, vanished); ICE fails
// before connecting (ErrICEFailed, vanished); DTLS fails (ErrDTLSFailed);
// a connected client stops answering consent checks for
// ICEDisconnectedTimeout + ICEFailedTimeout (ErrClientGone, vanished: 10
// to 12 s with the defaults); it sends no RTP for MediaTimeout
// (ErrNoMedia, vanished; a muted browser still sends RTP); its websocket
// is not read, a write blocked for WSWriteTimeout (ErrStalled, stopped
// reading); it sends a websocket text message that is not UTF-8
// (ErrInvalidUTF8, protocol error; the websocket closes with 1007 first);
// the client closes its peer connection or says bye (ErrPeerClosed); the
// server calls Hangup or Close, or closes (ErrHangup). Every goroutine of
// the call stops then; Close waits for them. The websocket closing alone
// does not end a call (a client may not use it at all), so it needs no
// ping of its own: the call's liveness is ICE's and the media's, and the
// websocket lives no longer than the call.
//
// # Bounds of the output
//
// Nothing the call sends waits on the client without a bound. Media goes
// from a queue of OutputQueue frames to a UDP socket: pion writes SRTP on
// ICE's UDP connection, which has no flow control, so the client cannot
// hold a write (only the local interface's queue can, for a moment); no
// TCP candidates are gathered. The websocket's backlog is
// EventBuffer events (the oldest dropped) plus 64 signaling messages, and
// each write is bounded by WSWriteTimeout, which ends the call (above).
// Pion's warning lines, some written per packet, have a budget per call
// (20, then one a second; the rest counted as pion_lines_dropped).
//
// # Logging
//
// Config.Logger receives the package's lines and pion's (through a
// LoggerFactory; pion's info lines at debug). Lines about an error carry
// it and the call id, once: every line is one strict JSON object with no
// key twice (the serving tests parse each line so). SDP is never logged (only its length, at debug),
// nor websocket payloads.
package webrtc
