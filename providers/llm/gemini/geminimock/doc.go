// Package geminimock is a Gemini API server for tests of the gemini
// adapter: it listens on 127.0.0.1, port 0 (New) or on a given listener
// (NewWithListener; openaimock.PipeListener is an in-memory one for tests
// in a testing/synctest bubble), answers each POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse with the next
// scripted Response as server-sent events (data: lines, each a
// GenerateContentResponse; the body's end ends the response), answers GET
// /v1beta/models (a warm-up), injects faults (an error status, a stall
// before a chosen chunk or before the headers, for good or for a while, a
// stream cut, any raw text), records every request body, path and key
// header it received, and counts the connections it accepted and the
// chunks it sent.
package geminimock
