package journal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Replay calls fn with every entry not acked, in seq order: the ones found
// at Open and those appended since (durable ones only). fn's payload is its
// own. fn may call Ack (and Append: entries appended during a replay are
// not part of it); an error from fn stops the replay and is returned. A
// frame that no longer reads back whole (the disk changed under the
// journal) is skipped and counted as corrupt.
func (j *Journal) Replay(fn func(seq uint64, kind byte, payload []byte) error) error {
	type item struct {
		seq uint64
		e   entry
	}
	j.mu.Lock()
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	items := make([]item, 0, len(j.pending))
	for seq, e := range j.pending {
		if seq <= j.synced {
			items = append(items, item{seq, e})
		}
	}
	j.mu.Unlock()
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.seq, b.seq) })

	var (
		f    *os.File
		fseg *segment
	)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for _, it := range items {
		j.mu.Lock()
		_, still := j.pending[it.seq]
		closed := j.closed
		j.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if !still {
			continue // acked meanwhile
		}
		if fseg != it.e.seg {
			if f != nil {
				f.Close()
				f = nil
			}
			var err error
			f, err = os.Open(it.e.seg.path)
			if errors.Is(err, os.ErrNotExist) {
				continue // deleted: all its entries were acked meanwhile
			}
			if err != nil {
				return fmt.Errorf("journal: open the segment %s for replay: %w", it.e.seg.path, err)
			}
			fseg = it.e.seg
		}
		buf := make([]byte, headerSize+int(it.e.n))
		if _, err := f.ReadAt(buf, it.e.off); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("journal: read the segment %s for replay: %w", it.e.seg.path, err)
		}
		fr, ok := decodeAt(buf, 0, it.seq, rules{})
		if !ok || fr.seq != it.seq || fr.n != it.e.n {
			// Lost for good: it leaves the pending set, so its segment can
			// still be deleted once the rest is acked.
			j.mu.Lock()
			j.st.corrupt++
			if _, ok := j.pending[it.seq]; ok {
				delete(j.pending, it.seq)
				it.e.seg.unacked--
			}
			j.mu.Unlock()
			j.log.Error().Str("segment", filepath.Base(it.e.seg.path)).Uint64("seq", it.seq).
				Msg("journal: an entry no longer reads back whole at replay; skipped and dropped")
			continue
		}
		if err := fn(it.seq, fr.kind, buf[headerSize:]); err != nil {
			return err
		}
	}
	return nil
}
