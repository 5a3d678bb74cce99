// Package twilio serves Twilio Media Streams, the bidirectional kind
// that <Connect><Stream> opens, as a call transport: Handler is the
// http.Handler the stream's websocket comes to, and each stream becomes a
// *Call, a conn.Conn at 8000 Hz both ways.
//
// # Inbound
//
// Twilio sends JSON text messages: connected, then start (the stream,
// call and account SIDs, the custom parameters and the media format),
// then media every 20 ms (base64 mu-law of the caller, with a chunk
// number and a timestamp in ms since the stream began), mark (the echo
// of one of our marks), dtmf (a key press, handed to the OnDTMF receiver
// as a messages.DTMF: the Call is a conn.DTMFReceiver), and stop. The call is handed to
// Config.OnCall once start arrived; without start within StartTimeout
// the websocket is closed (StatusPolicyViolation). A media format other
// than audio/x-mulaw 8000 Hz mono closes it with StatusUnsupportedData.
// Malformed JSON, bad base64, binary and oversized messages are counted
// and skipped; a run of MaxBadMessages of them closes the stream.
// Unknown events are counted and ignored.
//
// The payloads are decoded and cut into 20 ms frames whatever their
// length. The frames keep a timeline: when a chunk's timestamp is later
// than the end of the audio so far by more than half a frame (or, for a
// chunk without a timestamp, when chunk numbers are missing), the gap is
// filled with silence, so that frame n always starts n x 20 ms after the
// stream's first audio and the engine's clock stays true across lost
// chunks. A jump of more than ten minutes is taken for a bad timestamp
// and the timeline is re-anchored instead. When the engine reads too
// slowly the oldest frames are dropped (counted; the Seq of the frames
// read then jumps).
//
// stop, or the websocket closing, ends ReadFrame with a wrapped
// conn.ErrClosed that says why, after the frames still queued.
//
// # Outbound
//
// WriteFrame sends each 20 ms frame as it comes, as a media message of
// 160 mu-law bytes: Twilio buffers outbound audio and plays it in real
// time, and the pacer already releases it in real time. Mark sends a
// mark message after the audio written so far; Twilio echoes it when
// that audio has played, and the echo goes to the OnMarkEcho callback:
// it is the playback confirmation of the heard position.
//
// Clear sends a clear message: Twilio drops the audio it buffered and
// echoes at once every mark it still held. Those echoes confirm nothing,
// so they are swallowed (counted "marks_cleared"), and so are marks still
// in our own queue when Clear comes. Only a mark whose audio really
// played reaches OnMarkEcho. The pacer sends "end-<epoch>" only for an
// epoch released to its end, "pos-<epoch>-<ms>" every 100 ms of audio
// (Call.ConfirmsPlayback: the heard position at a cut is bounded by the
// newest echo) and, on barge-in, Clear; were a cleared mark's echo handed
// on, it would read as "played" although the caller cut it. (The pacer
// also ignores echoes of epochs other than the current one; swallowing
// them here keeps the echo meaning what its name says.)
//
// # Admission and authentication
//
// Before the upgrade, with Config.AuthToken set, the request's
// X-Twilio-Signature must be base64(HMAC-SHA1(auth token, URL)) of the
// URL Twilio requested: PublicURL followed by the request's path and
// query when set, else wss:// with the Host header, path and query (a
// websocket upgrade is a GET: no POST parameters are appended). The URL
// with or without its port is accepted, as Twilio's own validators do.
// A missing or wrong signature is answered 403 before admission, takes
// no slot and is counted ("forbidden"); it is never logged. Then
// Config.Admit reserves the call's slot: a refusal is answered 503 with
// Retry-After and a JSON body {"error":..., "cause":"full|draining|
// resource|rate_limited"}; refusals are logged as a rate-limited tally,
// not one line each. A slot is given back exactly once: by the handler
// when the stream never started (a failed upgrade, no start), by the
// server when the call it started ends.
//
// # Liveness
//
// The server pings every PingInterval (10 s) and waits PongTimeout
// (10 s) for the pong; IdleTimeout (10 s) bounds the time without any
// message after the start; a write must complete within WriteTimeout
// (5 s) and the unsent backlog stay within OutQueue. ReadFrame's error
// then wraps conn.ErrSilentInput (no message), ErrStoppedReading (a
// write or the backlog passed its bound, or no pong while media kept
// coming) or ErrVanished (no pong and nothing else either, or the
// connection lost). A peer that vanishes mid-stream is detected by the
// idle bound after 10 s; one that keeps sending but stops reading by the
// ping after at most 20 s (PingInterval + PongTimeout). Text that is not
// valid UTF-8 breaks the websocket protocol: the stream is closed with
// 1007 and the error wraps ErrProtocol, as for a run of bad messages.
// The server's own hang-up closes with the code of its
// conn.EndKind: 1000 normal, 1013 try again later, 1011 internal
// error, 1001 going away.
//
// # Privacy
//
// The call, stream and account SIDs, the custom parameters (they may
// hold phone numbers), DTMF digits and payloads are never logged nor put
// in errors. Log lines and errors carry our own id, Call.ID ("tw-" and
// 16 hex digits).
//
// # Goroutines
//
// Each stream runs on the request's goroutine (the reader), one writer
// and one pinger goroutine it starts and waits for; ServeHTTP returns when all
// have ended. Handler.Close hangs up every live stream and waits.
package twilio
