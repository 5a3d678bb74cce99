// Package openaimock is a loopback Chat Completions server for tests of the
// openai adapter: it listens on 127.0.0.1, port 0, answers each POST
// /chat/completions with the next scripted Response in the real
// server-sent-event shapes, injects faults (an error status, a stall
// before a chosen event or before the headers, a stream cut before
// [DONE], any raw line), records every request body it received, and
// counts the TCP connections it accepted.
package openaimock
