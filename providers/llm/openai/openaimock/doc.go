// Package openaimock is a Chat Completions server for tests of the openai
// adapter: it listens on 127.0.0.1, port 0 (New) or on a given listener
// (NewWithListener; PipeListener is an in-memory one for tests in a
// testing/synctest bubble), answers each POST /chat/completions with the
// next scripted Response in the real server-sent-event shapes, injects
// faults (an error status, a stall before a chosen event or before the
// headers, for good or for a while, a stream cut before [DONE], any raw
// line), records every request body it received, and counts the
// connections it accepted and the events it sent.
package openaimock
