// Package ttspump is the delivery half that the websocket TTS adapters
// (Cartesia, Deepgram Aura) share: the queue of events their reader has
// produced and the caller has not been handed yet, and the one goroutine
// that hands them to the session's Events channel in order, then the
// failure (if the session failed), then closes the channel.
//
// The queue is guarded by the session's own lock, not one of its own: a
// Cancel takes back its context's events (RetractLocked) and queues its
// Cancelled ack in the same critical section as the session's bookkeeping
// of that context, so no event of the cancelled context can slip in
// between. The reader throttles itself on PendingLocked and Space. A
// session ended by Close or by its context (EndLocked with no failure)
// drops what is pending and reports nothing; Stop makes the goroutine
// return at once, even when nobody reads Events.
package ttspump
