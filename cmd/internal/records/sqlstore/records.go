package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// The limits of a Query's Limit.
const (
	DefaultLimit = 100
	MaxLimit     = 10_000
)

// Put writes r unless its call is stored already (inserted false). It
// also leaves out a record an erasure covers (its call erased, or its
// caller's or callee's every call up to the erasure): a journal replayed
// after an erasure must not bring the erased call back.
func (s *Store) Put(ctx context.Context, r *records.Record) (bool, error) {
	if s.closed.Load() {
		return false, fmt.Errorf("%w: sqlstore: put", records.ErrClosed)
	}
	if r == nil || r.CallID == "" || r.Started.IsZero() {
		return false, fmt.Errorf("%w: a record needs its call id and start", ErrInvalidRecord)
	}
	ended := r.Ended
	if ended.IsZero() {
		ended = r.Started // retention counts from the end: never from the year 1
	}
	in, err := split(r)
	if err != nil {
		return false, fmt.Errorf("%w: call %s: %v", ErrInvalidRecord, r.CallID, err)
	}
	res, err := s.w.ExecContext(ctx, s.q(`INSERT INTO records (call_id, started, ended, node, transport, direction, agent,
    end_reason, caller_hash, callee_hash, turns, tools, record, transcript, tool_data, numbers, recording,
    transcript_removed, tool_data_removed, recording_removed)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20
WHERE NOT EXISTS (SELECT 1 FROM erasures WHERE call_id = $1
    OR (caller_hash <> '' AND caller_hash IN ($9, $10) AND at >= $3))
ON CONFLICT (call_id) DO NOTHING`),
		r.CallID, unixNano(r.Started), unixNano(ended), r.Node, r.Transport, r.Direction, r.Agent,
		r.EndReason, r.Caller.Hash, r.Callee.Hash, len(r.Turns), len(r.Tools), string(in.core),
		nullBytes(in.transcript), nullBytes(in.toolData), nullBytes(in.numbers), nullBytes(in.recording),
		in.transcriptRemoved, in.toolDataRemoved, in.recordingRemoved)
	if err != nil {
		return false, s.failed("put", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.failed("put", err)
	}
	return n == 1, nil
}

// Get returns the record of callID (records.ErrNotFound).
func (s *Store) Get(ctx context.Context, callID string) (*records.Record, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("%w: sqlstore: get", records.ErrClosed)
	}
	var in row
	var tr, td, nums, rec sql.NullString
	var core string
	err := s.r.QueryRowContext(ctx, s.q(`SELECT record, transcript, tool_data, numbers, recording,
    transcript_removed, tool_data_removed, recording_removed FROM records WHERE call_id = $1`), callID).
		Scan(&core, &tr, &td, &nums, &rec, &in.transcriptRemoved, &in.toolDataRemoved, &in.recordingRemoved)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", records.ErrNotFound, callID)
	}
	if err != nil {
		return nil, s.failed("get", err)
	}
	in.core = []byte(core)
	in.transcript, in.toolData, in.numbers, in.recording = bytesOf(tr), bytesOf(td), bytesOf(nums), bytesOf(rec)
	r, err := join(in)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: call %s: reading %w", callID, err)
	}
	return r, nil
}

func bytesOf(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

// List returns the summaries q selects, newest first.
func (s *Store) List(ctx context.Context, q records.Query) ([]records.Summary, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("%w: sqlstore: list", records.ErrClosed)
	}
	limit := q.Limit
	switch {
	case limit < 0 || limit > MaxLimit:
		return nil, fmt.Errorf("%w: limit %d: give 1 to %d (0: %d)", records.ErrInvalidQuery, limit, MaxLimit, DefaultLimit)
	case limit == 0:
		limit = DefaultLimit
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return nil, fmt.Errorf("%w: from %s is not before to %s", records.ErrInvalidQuery, q.From.Format("2006-01-02T15:04:05Z07:00"), q.To.Format("2006-01-02T15:04:05Z07:00"))
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if !q.From.IsZero() {
		where = append(where, "started >= "+arg(q.From.UnixNano()))
	}
	if !q.To.IsZero() {
		where = append(where, "started < "+arg(q.To.UnixNano()))
	}
	for _, f := range []struct{ col, v string }{
		{"agent", q.Agent}, {"end_reason", q.EndReason}, {"caller_hash", q.CallerHash},
		{"node", q.Node}, {"transport", q.Transport},
	} {
		if f.v != "" {
			where = append(where, f.col+" = "+arg(f.v))
		}
	}
	if q.Before != nil {
		where = append(where, "(started, call_id) < ("+arg(unixNano(q.Before.Started))+", "+arg(q.Before.CallID)+")")
	}
	query := `SELECT call_id, node, transport, direction, agent, started, ended, end_reason, turns, tools,
    caller_hash, recording IS NOT NULL AND NOT recording_removed FROM records`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY started DESC, call_id DESC LIMIT " + arg(limit)
	rows, err := s.r.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.failed("list", err)
	}
	defer rows.Close()
	out := []records.Summary{}
	for rows.Next() {
		var m records.Summary
		var started, ended int64
		if err := rows.Scan(&m.CallID, &m.Node, &m.Transport, &m.Direction, &m.Agent, &started, &ended,
			&m.EndReason, &m.Turns, &m.Tools, &m.CallerHash, &m.Recording); err != nil {
			return nil, s.failed("list", err)
		}
		m.Started, m.Ended = fromUnixNano(started), fromUnixNano(ended)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.failed("list", err)
	}
	return out, nil
}
