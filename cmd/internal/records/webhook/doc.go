// Package webhook sends each call's record, once it is durable, to the
// deployment's end-of-call URLs: a signed POST (HMAC-SHA256 over the
// timestamp and the body, so a receiver can refuse forgeries and
// replays) from a durable queue of its own (a records/journal on local
// disk), retried with jittered exponential backoff, at least once, with
// an idempotency key by which a receiver tells a repeat. It is a
// records.Sink: the records writer calls Deliver, which only enqueues.
// Verify is the receiver's side of the signature, for Go receivers and
// this package's tests.
package webhook
