package records

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// sweepTimeout bounds one sweep of the store.
const sweepTimeout = 10 * time.Minute

// sweepLoop is the sweeper: at Start and every SweepEvery it removes what
// the retention no longer keeps. Without any retention it does nothing.
func (s *Service) sweepLoop() {
	if s.cfg.Retention == (Retention{}) {
		return
	}
	t := time.NewTicker(s.cfg.SweepEvery)
	defer t.Stop()
	s.sweep()
	for {
		select {
		case <-t.C:
			s.sweep()
		case <-s.stop:
			return
		}
	}
}

// sweep runs one sweep: the store removes the fields (and records) whose
// retention has passed, and the recordings it names are deleted.
func (s *Service) sweep() {
	ctx, cancel := context.WithTimeout(s.ctx, sweepTimeout)
	defer cancel()
	res, err := s.store.Sweep(ctx, s.cfg.Retention, time.Now())
	if err != nil {
		s.st.sweepFailures.Add(1)
		s.log.Error().Err(err).Msg("records: the retention sweep failed; tried again at the next")
		return
	}
	s.st.sweeps.Add(1)
	s.st.sweptRecords.Add(uint64(res.Records))
	s.st.sweptTranscripts.Add(uint64(res.Transcripts))
	s.st.sweptToolData.Add(uint64(res.ToolData))
	s.st.sweptNumbers.Add(uint64(res.Numbers))
	if err := s.removeRecordings(res.Recordings, &s.st.sweptRecordings); err != nil {
		s.log.Error().Err(err).Msg("records: deleting swept recordings failed")
	}
}

// removeRecordings deletes recordings through the remover, counting those
// deleted in n.
func (s *Service) removeRecordings(recs []Recording, n interface{ Add(uint64) uint64 }) error {
	if s.cfg.Recordings == nil {
		return nil
	}
	var errs []error
	for _, r := range recs {
		if err := s.cfg.Recordings.Remove(r); err != nil {
			s.st.recordingRemoveFailures.Add(1)
			errs = append(errs, err)
			continue
		}
		n.Add(1)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d recordings not deleted: %w", len(errs), len(recs), errors.Join(errs...))
	}
	return nil
}

// Erase deletes the records e selects (one call, or every call of a
// caller by their hash: HashNumber gives it from a number), audited by the
// store, and deletes their recordings. The result counts the records
// erased; an error after the store's erasure says which recordings are
// left.
func (s *Service) Erase(ctx context.Context, e Erasure) (ErasureResult, error) {
	if (e.CallID == "") == (e.CallerHash == "") {
		return ErasureResult{}, fmt.Errorf("%w: an erasure names exactly one call id or one caller hash (a number is hashed with HashNumber)", ErrInvalidQuery)
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	res, err := s.store.Erase(ctx, e)
	if err != nil {
		return res, fmt.Errorf("records: erasure: %w", err)
	}
	s.st.erasures.Add(1)
	s.st.erased.Add(uint64(res.Erased))
	var removed counter
	if err := s.removeRecordings(res.Recordings, &removed); err != nil {
		s.log.Error().Err(err).Msg("records: deleting erased records' recordings failed")
		return res, fmt.Errorf("records: the records were erased, but %w: delete them by hand or erase again", err)
	}
	return res, nil
}

type counter struct{ n uint64 }

func (c *counter) Add(d uint64) uint64 { c.n += d; return c.n }
