// Package cartesia is the streaming TTS adapter for Cartesia's websocket
// (GET /tts/websocket upgraded; "X-API-Key: <key>" and "Cartesia-Version"
// headers). One session is one websocket; each of our contexts is one
// Cartesia context on it, under a context_id the session makes up
// ("ctx-1", "ctx-2", ...). Push sends a generation request with the text
// and continue=true, Flush one with an empty transcript and
// continue=false, Cancel a {"context_id", "cancel": true} message. The
// service's "chunk" messages (base64 raw PCM16 little-endian at the
// requested rate) become Audio events, its "timestamps" messages one Word
// event per word (Offset = the word's start within the context's audio),
// its "done" a Flushed event, and an "error" message the session's
// failure (Rejected with its status_code).
//
// The service sends no acknowledgement of a cancel. The adapter makes its
// own: Cancel marks the context cancelled, retracts the context's events
// not yet handed to Events, drops every later message of that context_id
// (counted), and queues the Cancelled event at once. So no event of the
// context follows the ack, and at most the one event the delivery
// goroutine holds at that moment precedes it.
//
// The websocket plumbing is providers/internal/wsconn (a reader and a
// writer goroutine, bounded queue, reply deadline, bounded close); one
// more goroutine per session delivers the decoded events to Events, so a
// slow consumer never holds the cancel's ack behind the network. Close
// stops and waits for all three. Messages are decoded in place with
// providers/internal/jsonscan (the audio chunks arrive 25-50 times a
// second per call). The key is read from the environment once, in New,
// and appears in no error, log or URL.
//
// Subpackage cartesiamock is a loopback (or in-memory, for
// testing/synctest) server speaking the same protocol, with per-word
// audio and timestamps, pacing and fault injection, for tests and the
// contract suite.
package cartesia
