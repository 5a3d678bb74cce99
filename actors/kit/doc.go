// Package kit holds what every actor of a call shares and that protoactor
// does not give as we need it: a bounded mailbox that moves a message without
// allocating, a dispatcher on long-lived workers owned by the actor system
// (Workers: a mailbox's run is handed to a parked goroutine instead of a new
// one per schedule), seeded backoff with jitter for restarts, the counters an
// actor reports to Describe, and the actor system set-up (logging through
// zerolog, dead letters counted, a Shutdown that waits for what the system
// started).
package kit
