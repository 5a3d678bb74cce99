// Package twilio serves Twilio Media Streams, the bidirectional kind
// that <Connect><Stream> opens, as a call transport: Handler is the
// http.Handler the stream's websocket comes to, and each stream becomes a
// *Call, a transport.Conn at 8000 Hz both ways.
//
// # Inbound
//
// Twilio sends JSON text messages: connected, then start (the stream,
// call and account SIDs, the custom parameters and the media format),
// then media every 20 ms (base64 mu-law of the caller, with a chunk
// number and a timestamp in ms since the stream began), mark (the echo
// of one of our marks), dtmf (a key press, handed to the OnDTMF receiver
// as a messages.DTMF: the Call is a transport.DTMFReceiver), and stop. The call is handed to
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
// transport.ErrClosed that says why, after the frames still queued.
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
// # Privacy
//
// The call, stream and account SIDs, the custom parameters (they may
// hold phone numbers), DTMF digits and payloads are never logged nor put
// in errors. Log lines and errors carry our own id, Call.ID ("tw-" and
// 16 hex digits).
//
// # Goroutines
//
// Each stream runs on the request's goroutine (the reader) and one
// writer goroutine it starts and waits for; ServeHTTP returns when both
// have ended. Handler.Close hangs up every live stream and waits.
package twilio
