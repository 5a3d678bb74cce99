package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
)

// Sweep removes, in one transaction, each part of the records whose
// retention has passed at now: a part is kept while now - Ended is less
// than its retention, and goes at that age. Whole records go first
// (Records); then transcripts (TranscriptRemoved set), tool arguments and
// results (ToolDataRemoved), numbers (the parties' numbers and hashes,
// so a caller can no longer be found by hash either) and recordings (the
// account stays, Removed set). Only parts still there count. The result
// lists the recordings whose time passed, the removed records' ones
// included, for the caller to delete.
func (s *Store) Sweep(ctx context.Context, ret records.Retention, now time.Time) (records.SweepResult, error) {
	if s.closed.Load() {
		return records.SweepResult{}, fmt.Errorf("%w: sqlstore: sweep", records.ErrClosed)
	}
	if ret.Records < 0 || ret.Transcripts < 0 || ret.Recordings < 0 || ret.ToolData < 0 || ret.Numbers < 0 {
		return records.SweepResult{}, fmt.Errorf("%w: a negative retention", records.ErrInvalidConfig)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return records.SweepResult{}, s.failed("sweep", err)
	}
	defer tx.Rollback()
	cutoff := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	var res records.SweepResult
	update := func(d time.Duration, query string, count *int) error {
		if d == 0 || err != nil {
			return err
		}
		r, e := tx.ExecContext(ctx, s.q(query), cutoff(d))
		if e != nil {
			return e
		}
		n, e := r.RowsAffected()
		*count = int(n)
		return e
	}
	if ret.Records > 0 {
		res.Recordings, err = recordings(ctx, tx, s.q(`SELECT recording FROM records WHERE ended <= $1
    AND recording IS NOT NULL AND NOT recording_removed ORDER BY call_id`), cutoff(ret.Records))
	}
	err = update(ret.Records, `DELETE FROM records WHERE ended <= $1`, &res.Records)
	err = update(ret.Transcripts, `UPDATE records SET transcript = NULL, transcript_removed = TRUE
WHERE ended <= $1 AND transcript IS NOT NULL`, &res.Transcripts)
	err = update(ret.ToolData, `UPDATE records SET tool_data = NULL, tool_data_removed = TRUE
WHERE ended <= $1 AND tool_data IS NOT NULL`, &res.ToolData)
	err = update(ret.Numbers, `UPDATE records SET numbers = NULL, caller_hash = '', callee_hash = ''
WHERE ended <= $1 AND numbers IS NOT NULL`, &res.Numbers)
	if ret.Recordings > 0 && err == nil {
		var recs []records.Recording
		recs, err = recordings(ctx, tx, s.q(`SELECT recording FROM records WHERE ended <= $1
    AND recording IS NOT NULL AND NOT recording_removed ORDER BY call_id`), cutoff(ret.Recordings))
		res.Recordings = append(res.Recordings, recs...)
		var removed int
		err = update(ret.Recordings, `UPDATE records SET recording_removed = TRUE
WHERE ended <= $1 AND recording IS NOT NULL AND NOT recording_removed`, &removed)
	}
	if err != nil {
		return records.SweepResult{}, s.failed("sweep", err)
	}
	if err := tx.Commit(); err != nil {
		return records.SweepResult{}, s.failed("sweep", err)
	}
	return res, nil
}
