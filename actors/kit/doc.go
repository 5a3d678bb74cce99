// Package kit holds what every actor of a call shares and that protoactor
// does not give as we need it: a bounded mailbox that moves a message without
// allocating, seeded backoff with jitter for restarts, the counters an actor
// reports to Describe, and the actor system set-up (logging through zerolog,
// dead letters counted).
package kit
