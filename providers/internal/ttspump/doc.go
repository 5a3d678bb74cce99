// Package ttspump is the delivery half that every TTS adapter shares
// (Cartesia, Deepgram Aura, ElevenLabs, flite, OpenAI speech): the queue
// of events the adapter has produced and the caller has not been handed
// yet, and the one goroutine that hands them to the session's Events
// channel in order, then the failure (if the session failed), then closes
// the channel. The adapters keep their context tables (what each vendor's
// contexts are and how they end); how an event reaches the caller is
// written once, here.
//
// The queue is guarded by the session's own lock, not one of its own: a
// Cancel takes back its context's events (RetractLocked, which also takes
// back the event held out to the reader) and queues its Cancelled ack in
// the same critical section as the session's bookkeeping of that context,
// so no event of the cancelled context can slip in between. An adapter
// that wants the ack at once queues it ahead of the audio waiting for the
// caller (QueueAheadLocked; acks keep their order). The producer throttles
// itself on PendingLocked and Space. A session ended by Close or by its
// context (EndLocked with no failure) drops what is pending and reports
// nothing; a websocket that failed (EndLocked with the failure) delivers
// what it had received first; an adapter's own work that failed
// (FailLocked) drops what is pending and reports the failure next. Stop
// makes the goroutine return at once, even when nobody reads Events.
//
// Contexts is the context table of the adapters that speak one context at
// a time in the order they were opened (flite, OpenAI speech): the open
// contexts by id and in order, and the bounded memory of the finished
// ids. The websocket adapters keep their own tables, keyed by the ids on
// their wire.
package ttspump
