// Package anthropicmock is a Messages API server for tests of the
// anthropic adapter: it listens on 127.0.0.1, port 0 (New) or on a given
// listener (NewWithListener; openaimock.PipeListener is an in-memory one
// for tests in a testing/synctest bubble), answers each POST /v1/messages
// with the next scripted Response in the real server-sent-event shapes
// (an event: line naming the event's type, then its data: line), injects
// faults (an error status, a stall before a chosen event or before the
// headers, for good or for a while, a stream cut, any raw text), records
// every request body and the key and version headers it received, and
// counts the connections it accepted and the events it sent.
package anthropicmock
