// Package records keeps what happened in every call: the call record
// (ids, parties by policy, times, end reason, turns with their timelines,
// barge-ins, the transcript as heard, tool calls with their contract
// outcomes, provider usage, failures and restarts), redacted and trimmed
// by policy before anything touches a disk, written off the call's path.
//
// The pieces, each its own package below this one: journal (the node's
// write-ahead journal on local disk), sqlstore (SQLite, the embedded
// default, and PostgreSQL for clusters, behind Store), redact (PII
// redaction), recording (two-channel call audio), webhook (signed
// end-of-call POSTs from a durable queue) and tracing (OpenTelemetry).
// This package holds the record's types, the Store interface the backends
// keep, and the node's service that builds records from a call's live
// events and hands them to the journal and the store.
package records
