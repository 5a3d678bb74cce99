package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Recover runs once, before Start. It hands the records journal's
// entries not yet in the store to the putter (counted replayed), and
// turns every call the live-call journal has begun and not ended into a
// record with the end reason ReasonNodeCrashed: everything known at its
// last checkpoint (or its begin), ended then. It returns how many calls
// it recovered.
func (s *Service) Recover(ctx context.Context) (recovered int, err error) {
	if s.started.Load() || s.closed.Load() {
		return 0, errors.New("records: Recover runs once, before Start")
	}
	err = s.recs.Replay(func(seq uint64, kind byte, payload []byte) error {
		if kind != kindRecord {
			s.st.corrupt.Add(1)
			s.log.Error().Msg("records: the records journal holds an entry of an unknown kind; skipped")
			return s.recs.Ack(seq)
		}
		s.pend.push(seq, bytes.Clone(payload))
		s.st.replayed.Add(1)
		return ctx.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("records: replaying the records journal: %w", err)
	}

	type liveCall struct {
		last  *liveEntry
		ended bool
		seqs  []uint64
	}
	calls := map[string]*liveCall{}
	var order []string
	var orphans []uint64
	err = s.liveJ.Replay(func(seq uint64, kind byte, payload []byte) error {
		var e liveEntry
		if err := json.Unmarshal(payload, &e); err != nil || e.CallID == "" || (kind != kindEnd && e.Record == nil) {
			s.st.corrupt.Add(1)
			s.log.Error().Msg("records: a live-call journal entry does not decode; skipped")
			orphans = append(orphans, seq)
			return nil
		}
		lc := calls[e.CallID]
		if lc == nil {
			lc = &liveCall{}
			calls[e.CallID] = lc
			order = append(order, e.CallID)
		}
		lc.seqs = append(lc.seqs, seq)
		switch kind {
		case kindBegin:
			if lc.last == nil {
				lc.last = &e
			}
		case kindCheckpoint:
			lc.last = &e
		case kindEnd:
			lc.ended = true
		default:
			s.st.corrupt.Add(1)
		}
		return ctx.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("records: replaying the live-call journal: %w", err)
	}
	for _, id := range order {
		lc := calls[id]
		if !lc.ended && lc.last != nil {
			r := crashed(lc.last)
			payload, err := json.Marshal(r)
			if err != nil {
				return recovered, fmt.Errorf("records: recovering call %s: %w", id, err)
			}
			seq, err := s.recs.Append(kindRecord, payload)
			if err != nil {
				// Its live entries stay: the next start tries again.
				return recovered, fmt.Errorf("records: journaling the recovered record of call %s: %w", id, err)
			}
			s.pend.push(seq, payload)
			recovered++
			s.st.recovered.Add(1)
		}
		for _, q := range lc.seqs {
			if err := s.liveJ.Ack(q); err != nil {
				return recovered, fmt.Errorf("records: acking the live-call journal: %w", err)
			}
		}
	}
	for _, q := range orphans {
		if err := s.liveJ.Ack(q); err != nil {
			return recovered, fmt.Errorf("records: acking the live-call journal: %w", err)
		}
	}
	return recovered, nil
}

// crashed is the record of a call live at a crash, from its last live
// entry (already redacted and trimmed by policy when it was written).
func crashed(e *liveEntry) *Record {
	r := e.Record
	r.Version = SchemaVersion
	r.EndReason = ReasonNodeCrashed
	r.Ended = e.At
	if r.Turns == nil {
		r.Turns = []Turn{}
	}
	if r.Transcript == nil && !r.TranscriptRemoved {
		r.Transcript = []Line{}
	}
	if r.Tools == nil {
		r.Tools = []ToolCall{}
	}
	if r.Usage == nil {
		r.Usage = []Usage{}
	}
	if r.Failures == nil {
		r.Failures = []Failure{}
	}
	return r
}
