// Package auramock is a loopback Deepgram Aura websocket server for the
// adapter's tests and the TTS contract suite, built on wsmock: it speaks
// the service's /v1/speak protocol (Speak text into a buffer; Flush turns
// the buffer into binary PCM16 frames, one or more per word, then
// Flushed; Clear drops the buffer and what is queued, then Cleared; Close
// speaks what is left and closes), sends a Metadata message on connect,
// answers flushes over a limit with a Warning, and records what the
// client sent. Faults (refusals, stalls, drops, violations, a server
// that answers no ping) are wsmock's.
//
// It is test support: production code does not import it.
package auramock
