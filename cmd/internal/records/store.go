package records

import (
	"context"
	"time"
)

// Store keeps call records. Both backends (sqlstore's SQLite and
// PostgreSQL) keep it and pass the same suite (records/storetest).
type Store interface {
	// Put writes a record. It is idempotent by CallID: a second Put of a
	// call already stored changes nothing and reports inserted false (a
	// journal replay after a crash between the write and its ack).
	Put(ctx context.Context, r *Record) (inserted bool, err error)
	// Get returns one record (ErrNotFound).
	Get(ctx context.Context, callID string) (*Record, error)
	// List returns the summaries of the records q selects, newest first
	// (by Started, then CallID), at most q.Limit.
	List(ctx context.Context, q Query) ([]Summary, error)
	// Erase deletes the records e selects and writes an audit entry of
	// it (who, when, the selector, how many), in one transaction. It
	// returns the erased records' recordings, for the caller to delete.
	Erase(ctx context.Context, e Erasure) (ErasureResult, error)
	// Sweep removes the fields whose retention has passed at now (see
	// Retention), and returns what it removed.
	Sweep(ctx context.Context, r Retention, now time.Time) (SweepResult, error)
	// Audit lists the erasure audit entries, oldest first.
	Audit(ctx context.Context) ([]AuditEntry, error)
	Close() error
}

// Query selects records. Zero fields select everything.
type Query struct {
	// From and To bound Started: From <= Started < To.
	From, To   time.Time
	Agent      string
	EndReason  string
	CallerHash string
	Node       string
	Transport  string
	// Limit caps the answer (default 100, at most 10 000); Before pages:
	// only records before that summary (its Started and CallID) in the
	// list's order.
	Limit  int
	Before *Cursor
}

// Cursor is a position in the list's order.
type Cursor struct {
	Started time.Time `json:"started"`
	CallID  string    `json:"call_id"`
}

// Summary is a record as lists show it.
type Summary struct {
	CallID     string    `json:"call_id"`
	Node       string    `json:"node"`
	Transport  string    `json:"transport"`
	Direction  string    `json:"direction"`
	Agent      string    `json:"agent"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended"`
	EndReason  string    `json:"end_reason"`
	Turns      int       `json:"turns"`
	Tools      int       `json:"tools"`
	CallerHash string    `json:"caller_hash,omitempty"`
	Recording  bool      `json:"recording,omitempty"`
}

// Erasure selects the records to erase: one call, or every call of one
// caller (by the caller's hash; the service hashes a number given to
// it). Exactly one of CallID and CallerHash is set.
type Erasure struct {
	CallID     string
	CallerHash string
	// By names who asked (the operator's token name or "operator");
	// Reason is their words, kept in the audit.
	By     string
	Reason string
	At     time.Time
}

// ErasureResult is what an erasure removed.
type ErasureResult struct {
	Erased     int
	Recordings []Recording
}

// AuditEntry records one erasure. It keeps the selector (a call id or a
// caller's hash, never a number) and how many records went.
type AuditEntry struct {
	At         time.Time `json:"at"`
	By         string    `json:"by"`
	Reason     string    `json:"reason,omitempty"`
	CallID     string    `json:"call_id,omitempty"`
	CallerHash string    `json:"caller_hash,omitempty"`
	Erased     int       `json:"erased"`
}

// Retention is how long each part of a record is kept, counted from the
// call's end; zero keeps it forever. Records bounds the whole record.
type Retention struct {
	Records     time.Duration
	Transcripts time.Duration
	Recordings  time.Duration
	ToolData    time.Duration
	Numbers     time.Duration
}

// SweepResult counts what one sweep removed.
type SweepResult struct {
	Records     int
	Transcripts int
	ToolData    int
	Numbers     int
	// Recordings are the recordings whose retention passed (their
	// records now say Removed), for the caller to delete.
	Recordings []Recording
}
