// Package pcmws serves calls over a plain PCM websocket, for simple
// clients, test rigs and other carriers' gateways: Handler is the
// http.Handler, and each websocket becomes a *Call, a conn.Conn.
//
// # Protocol
//
// The client opens a websocket to the handler's URL. The query's rate
// parameter sets the call's sample rate both ways: 8000, 16000 (the
// default), 24000 or 48000; any other value is refused with HTTP 400
// before the upgrade. The rest of the query is the client's, handed on
// as Call.Query.
//
// Audio is binary messages of signed 16-bit little-endian mono PCM at
// the call's rate. The client's messages may be of any even length: they
// are cut into 20 ms frames on arrival (a message of odd length is
// dropped and counted). The server sends the bot's audio as it is
// released in real time, one message per 20 ms frame (rate/50 samples).
// The client is expected to stream for the whole call, silence included:
// after IdleTimeout (10 s) without any message the call is taken for
// lost.
//
// Control messages are JSON text messages with a "type":
//
//	server -> client  {"type":"clear"}               drop the bot audio not yet played (barge-in)
//	server -> client  {"type":"mark","name":"end-3"} echo this name when the audio before it has played
//	server -> client  {"type":"event","data":{...}}  a live event (Call.Publish)
//	client -> server  {"type":"mark","name":"end-3"} the echo of a mark
//	client -> server  {"type":"hangup"}              end the call
//
//	server -> client  {"type":"error","error":"..."} what was wrong with a message of the client
//
// A bad message (not one JSON object with a string "type", a mark
// without a string "name", audio of odd length, a message over
// MaxMessageBytes) is counted, dropped and answered with an error
// message, the shape of the WebRTC websocket's; its text says what was
// wrong and quotes nothing of the message. A control of an unknown type
// is answered the same way but does not count towards the bound, so
// that clients may send newer ones. The answers are bounded: one per bad
// message at most, a burst of 8, then one per second (the rest counted
// "errors_unsent"). A run of MaxBadMessages bad messages closes the call
// (1008). A text message that is not valid UTF-8 breaks the websocket
// protocol: the call is closed with 1007. The server ends a call with
// the close code of its conn.EndKind (1000 normal, 1013 try again
// later, 1011 internal error, 1001 going away) and a reason that says
// why.
//
// # Admission, origins and liveness
//
// Before the upgrade a browser's request (it carries Origin) must come
// from the server's own host or from one of AllowedOrigins, scheme, host
// and port alike; another origin is answered 403 with a body that names
// the setting, and takes no slot. Config.Admit then reserves the call's
// slot: a refusal is answered 503 with Retry-After and a JSON body
// {"error":..., "cause":"full|draining|resource|rate_limited"} (refusals
// are logged as a rate-limited tally). A slot is given back exactly
// once.
//
// The server pings every PingInterval (10 s) with a PongTimeout (10 s),
// bounds the time without any message by IdleTimeout, a write by
// WriteTimeout (5 s) and the unsent backlog by OutQueue. ReadFrame's
// error then wraps conn.ErrSilentInput (nothing came for
// IdleTimeout), ErrStoppedReading (a write or the backlog passed its
// bound, or no pong while the client's messages kept coming: it sends
// but does not read) or ErrVanished (no pong and nothing else, or the
// connection lost). A client that stops reading but keeps streaming is
// cut at most PingInterval + PongTimeout (20 s) after its last pong.
//
// # Marks and clear
//
// A mark is the server asking "tell me when you have played everything I
// sent before this". The client must echo each mark once the audio
// before it has played, and may echo marks in order only. The echo is
// the engine's playback confirmation; a client that does not echo (a
// client that plays nothing, a recorder) leaves the engine without it:
// nothing breaks (the pacer keeps its own clock and only counts echoes
// today), but the heard position stays the pacer's estimate, and the
// unechoed marks are counted ("marks_unechoed" once more than
// MaxPendingMarks wait).
//
// On clear the client drops the audio it has not played. It may echo
// the marks it held then or drop them: either way the server ignores the
// echo of any mark it sent before the clear (counted "marks_cleared"),
// since that audio was not played, and marks still queued on the server
// are dropped with their audio. Only the echo of a mark whose audio
// played reaches OnMarkEcho.
//
// # Goroutines and privacy
//
// Each call runs on the request's goroutine (the reader), one writer and
// one pinger goroutine it starts and waits for; Handler.Close hangs up every live
// call and waits. Logs carry our call id (Call.ID, "pw-" and 16 hex
// digits), never the query, mark names or audio.
package pcmws
