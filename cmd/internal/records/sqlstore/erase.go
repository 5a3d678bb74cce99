package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// Erase deletes the records e selects and writes its audit entry, in one
// transaction. By caller hash it takes every call the hash is a party to
// (the caller of an inbound call, the callee of an outbound one): a
// person's calls, whichever end they were. An erasure that matched
// nothing is audited too (Erased 0). The result lists the erased
// records' recordings not yet removed, for the caller to delete.
func (s *Store) Erase(ctx context.Context, e records.Erasure) (records.ErasureResult, error) {
	if s.closed.Load() {
		return records.ErasureResult{}, fmt.Errorf("%w: sqlstore: erase", records.ErrClosed)
	}
	if (e.CallID == "") == (e.CallerHash == "") {
		return records.ErasureResult{}, fmt.Errorf("%w: an erasure names one call or one caller hash, not both or neither", records.ErrInvalidQuery)
	}
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	where, arg := "call_id = $1", e.CallID
	if e.CallerHash != "" {
		where, arg = "(caller_hash = $1 OR callee_hash = $1)", e.CallerHash
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return records.ErasureResult{}, s.failed("erase", err)
	}
	defer tx.Rollback()
	var res records.ErasureResult
	if res.Recordings, err = recordings(ctx, tx, s.q(`SELECT recording FROM records WHERE `+where+
		` AND recording IS NOT NULL AND NOT recording_removed ORDER BY call_id`), arg); err != nil {
		return records.ErasureResult{}, s.failed("erase", err)
	}
	del, err := tx.ExecContext(ctx, s.q(`DELETE FROM records WHERE `+where), arg)
	if err != nil {
		return records.ErasureResult{}, s.failed("erase", err)
	}
	n, err := del.RowsAffected()
	if err != nil {
		return records.ErasureResult{}, s.failed("erase", err)
	}
	res.Erased = int(n)
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO erasures (at, requested_by, reason, call_id, caller_hash, erased)
VALUES ($1, $2, $3, $4, $5, $6)`), unixNano(at), e.By, e.Reason, e.CallID, e.CallerHash, res.Erased); err != nil {
		return records.ErasureResult{}, s.failed("erase", err)
	}
	if err := tx.Commit(); err != nil {
		return records.ErasureResult{}, s.failed("erase", err)
	}
	return res, nil
}

// Audit lists the erasures, oldest first.
func (s *Store) Audit(ctx context.Context) ([]records.AuditEntry, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("%w: sqlstore: audit", records.ErrClosed)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT at, requested_by, reason, call_id, caller_hash, erased FROM erasures ORDER BY id`)
	if err != nil {
		return nil, s.failed("audit", err)
	}
	defer rows.Close()
	out := []records.AuditEntry{}
	for rows.Next() {
		var a records.AuditEntry
		var at int64
		if err := rows.Scan(&at, &a.By, &a.Reason, &a.CallID, &a.CallerHash, &a.Erased); err != nil {
			return nil, s.failed("audit", err)
		}
		a.At = fromUnixNano(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, s.failed("audit", err)
	}
	return out, nil
}

// recordings reads the recording column of the rows query selects.
func recordings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]records.Recording, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []records.Recording
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var r records.Recording
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("reading a recording's account: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
