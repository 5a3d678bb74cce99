// Package wscall is the machinery that the carrier websocket transports
// (twilio, pcmws) share for one call: the inbox that re-chunks the
// caller's audio into 20 ms frames and fills gaps with silence, the
// bounded outbox of encoded messages with its mark book (which echo is a
// playback confirmation and which belongs to audio a clear threw away),
// the call's core (reader bookkeeping, one writer goroutine, timers,
// hang-up with a close code and reason, the end reason as a wrapped
// transport.ErrClosed), a handler's counters and its registry of live
// calls. The protocol packages parse and encode; this one owns the
// goroutines and the ordering.
package wscall
