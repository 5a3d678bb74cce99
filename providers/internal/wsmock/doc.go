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
// It is test support: production code does not import it.
package wsmock
