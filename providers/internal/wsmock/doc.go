// Package wsmock is the core of the loopback websocket servers that the
// streaming speech adapters' mocks (deepgrammock, and the TTS mocks after
// it) build on: it listens on 127.0.0.1, port 0, or on a given listener
// (PipeListener is an in-memory one, for tests in a testing/synctest
// bubble), records each handshake (path, query, headers), injects faults
// (refuse the handshake with a status, stall or slow the connect, drop the
// connection, stall or delay a message, send a protocol violation instead
// of a message), and runs the vendor's session function over a Conn whose
// own goroutine keeps reading what the client sends, so a stalled sender
// never stops the client's writes. It counts handshakes, sessions, the
// vendor messages sent and the client messages received.
//
// Its faults are the house's one fault vocabulary: a Fault is a
// providertest.Fault (kind, the message it acts before, status, duration)
// with what only a websocket can show (the refusal's body, the kind of
// protocol violation, a hung server that answers no ping).
//
// Loop is the session loop the TTS mocks (cartesiamock, auramock) share: a
// vendor session (a Looper) queues its answers and sends them one by one,
// paced like a real-time synthesizer or as fast as the connection takes
// them, while it goes on reading the client (Forward: a goroutine hands
// the client's messages over on an Inbox), so a cancel or a clear read
// meanwhile stops what is still queued. Loop owns the goroutine and the
// timer and returns only when both are done with.
//
// It is test support (a server speaking a wire, named …mock): production
// code does not import it.
package wsmock
