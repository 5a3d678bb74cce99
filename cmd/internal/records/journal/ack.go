package journal

import (
	"fmt"
	"os"
	"path/filepath"
)

// Acks live in a side file per segment (<first seq>.ack), not in the
// segment stream: a segment is then deleted with its own acks once all
// its entries are acked, in any order, and no ack of an older, still live
// segment ever has to be carried forward out of a newer one being
// deleted. The segment files hold only entries.

// Ack marks the entry seq done, durably (the ack is fdatasync'd before Ack
// returns; acks arriving while an ack sync runs share the next one). A
// replay, now or after a restart, skips it. Once every entry of a segment
// is acked and the segment is not the one being written, it is deleted.
// Acking an entry already acked is a no-op; a seq never handed out is
// ErrUnknownSeq.
func (j *Journal) Ack(seq uint64) error {
	j.mu.Lock()
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	if seq == 0 || seq >= j.next {
		next := j.next
		j.mu.Unlock()
		return fmt.Errorf("%w: %d (this journal's seqs are below %d)", ErrUnknownSeq, seq, next)
	}
	e, ok := j.pending[seq]
	j.mu.Unlock()
	if !ok {
		return nil
	}
	if err := j.writeAck(e.seg, seq); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.pending[seq]; !ok {
		return nil // a concurrent Ack of the same seq got there first
	}
	delete(j.pending, seq)
	e.seg.unacked--
	j.st.acks++
	if e.seg.unacked == 0 && e.seg != j.segs[len(j.segs)-1] && !j.closed {
		j.deleteSegmentLocked(e.seg)
	}
	return nil
}

// writeAck appends the ack frame of seq to s's ack file and waits until it
// is durable.
func (j *Journal) writeAck(s *segment, seq uint64) error {
	j.amu.Lock()
	defer j.amu.Unlock()
	if j.ackClosed {
		return ErrClosed
	}
	if j.ackErr != nil {
		return j.ackErr
	}
	if s.gone {
		return nil // deleted meanwhile: every entry of it was acked
	}
	if s.ack == nil {
		path := s.ackPath()
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("%w: open the ack file %s: %v", ErrWrite, path, err)
		}
		if s.ackSize == 0 {
			// A new file's name must be durable before the acks in it.
			if err := syncDir(j.cfg.Dir); err != nil {
				f.Close()
				return fmt.Errorf("%w: sync the directory %s: %v", ErrWrite, j.cfg.Dir, err)
			}
		}
		s.ack = f
	}
	var b [headerSize]byte
	fr := appendFrame(b[:0], seq, kindAck, nil)
	if _, err := s.ack.WriteAt(fr, s.ackSize); err != nil {
		if terr := s.ack.Truncate(s.ackSize); terr != nil {
			j.failAcksLocked(fmt.Errorf("%w: an ack write failed (%v) and cutting it off failed too: %v", ErrBroken, err, terr))
			return j.ackErr
		}
		return fmt.Errorf("%w: %s: %v (free disk space under %s)", ErrWrite, filepath.Base(s.ackPath()), err, j.cfg.Dir)
	}
	s.ackSize += headerSize
	j.ackWritten++
	mine := j.ackWritten
	j.ackDirty[s] = struct{}{}
	for j.ackSynced < mine {
		if j.ackErr != nil {
			return j.ackErr
		}
		if j.ackSyncing {
			j.ackDone.Wait()
			continue
		}
		j.syncAcksLocked()
	}
	return nil
}

// syncAcksLocked syncs every ack file written since the last sync, without
// amu held while it syncs (acks written meanwhile wait for the next).
func (j *Journal) syncAcksLocked() error {
	j.ackSyncing = true
	target := j.ackWritten
	files := make([]*os.File, 0, len(j.ackDirty))
	for s := range j.ackDirty {
		files = append(files, s.ack)
	}
	clear(j.ackDirty)
	j.amu.Unlock()
	var err error
	for _, f := range files {
		if err = datasync(f); err != nil {
			err = fmt.Errorf("%w: fdatasync of %s: %v", ErrBroken, filepath.Base(f.Name()), err)
			break
		}
	}
	j.amu.Lock()
	j.ackSyncing = false
	j.st.ackSyncs++
	if err != nil {
		j.failAcksLocked(err)
		return err
	}
	if target > j.ackSynced {
		j.ackSynced = target
	}
	j.ackDone.Broadcast()
	return nil
}

// failAcksLocked breaks the acks for good (see ErrBroken); Appends go on,
// and entries whose acks are lost are replayed after the restart.
func (j *Journal) failAcksLocked(err error) {
	if j.ackErr == nil {
		j.ackErr = err
		j.log.Error().Err(err).Msg("journal: acks broken; Ack refuses every call until the journal is opened again")
	}
	j.ackDone.Broadcast()
}
