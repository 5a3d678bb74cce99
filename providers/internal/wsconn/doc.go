// Package wsconn is the websocket plumbing the streaming speech adapters
// share (Deepgram's STT today; Cartesia, ElevenLabs and Deepgram Aura TTS
// next): a Dialer that opens a session with a connect deadline and the
// vendor's headers, and may keep one pre-dialed connection from Warm; and a
// Session that owns exactly two goroutines, a reader that hands each
// inbound message (bounded in size) to the adapter's handler and a writer
// that sends the queued frames, a keep-alive message when the line has
// been quiet, and enforces a reply deadline the adapter arms while an
// answer is owed. Close sends the adapter's goodbye frames and does the
// close handshake within a bounded wait, then waits for both goroutines.
//
// Every failure is one of the typed errors of package providers: an HTTP
// refusal of the handshake is Rejected{Status}, a malformed or oversized
// message or one of a type the adapter does not take is Protocol, a cut
// connection is Disconnected, a passed deadline is Timeout.
//
// It is built on github.com/coder/websocket. The Dialer opens the network
// connection itself (one http.Transport per handshake, handed the
// connection it dialed) so that a session always holds its raw net.Conn:
// the write deadline and the close deadline are deadlines on that
// connection, which costs no timer or goroutine per frame.
package wsconn
