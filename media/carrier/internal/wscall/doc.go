// Package wscall is the machinery that the carrier websocket transports
// (twilio, pcmws) share for one call: the Limits their Config embeds (the
// common fields, their defaults and validation, once), the inbox that re-chunks the
// caller's audio into 20 ms frames and fills gaps with silence, the
// bounded outbox of encoded messages with its mark book (which echo is a
// playback confirmation and which belongs to audio a clear threw away),
// the call's core (reader bookkeeping, one writer and one pinger
// goroutine, the liveness bounds, hang-up with a close code and reason,
// the end reason as a wrapped conn.ErrClosed with its typed cause),
// a handler's counters and its registry: the gate before the upgrade
// (a check, the admission with 503, Retry-After and a JSON cause, a
// rate-limited tally of refusals) and the set of live calls. The protocol packages parse and encode; this one owns the
// goroutines and the ordering.
package wscall
