package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/rs/zerolog"
)

// DefaultSegmentBytes is the segment size past which Append starts a new
// segment.
const DefaultSegmentBytes = 8 << 20

// Config is a journal's settings.
type Config struct {
	// Dir holds the segments (created 0700 if missing). One journal per
	// directory: Open takes a lock on it.
	Dir string
	// SegmentBytes: a segment is closed and a new one started before a
	// frame would take it past this size (default 8 MiB). A frame larger
	// than it has a segment of its own.
	SegmentBytes int64
	Log          zerolog.Logger
}

func (c *Config) setDefaults() {
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
}

// Validate says what is wrong with the (defaulted) settings.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return fmt.Errorf("%w: Dir is empty (the journal's directory on local disk)", ErrInvalidConfig)
	}
	if c.SegmentBytes < 0 {
		return fmt.Errorf("%w: SegmentBytes is %d (0 for the default of 8 MiB, or a size in bytes)", ErrInvalidConfig, c.SegmentBytes)
	}
	return nil
}

// segment is one .wal file and its .ack side file.
type segment struct {
	first   uint64 // its name
	path    string
	size    int64 // bytes of valid frames; the current one's next frame goes here
	unacked int   // entries not acked
	corrupt int   // runs of bad bytes found in it at Open

	// Guarded by Journal.amu.
	ack     *os.File // nil until its first ack (or Open found acks)
	ackSize int64
	gone    bool // deleted: its acks are moot
}

func (s *segment) ackPath() string { return s.path[:len(s.path)-len(walExt)] + ackExt }

// entry is where a pending (unacked) entry's frame is.
type entry struct {
	seg *segment
	off int64
	n   uint32
}

// Journal is a write-ahead journal: Append, Ack, Replay and Close are safe
// from many goroutines at once. It starts no goroutines: the appender
// that finds no sync running runs the next one itself and wakes the
// others it covered (group commit).
type Journal struct {
	cfg  Config
	log  zerolog.Logger
	lock *os.File

	mu       sync.Mutex
	syncDone *sync.Cond // on mu: a sync finished (synced moved, or err set)
	segs     []*segment // oldest first; the last is the one being written
	cur      *os.File   // the last segment's file
	pending  map[uint64]entry
	next     uint64 // the next Append's seq
	written  uint64 // the last seq written
	synced   uint64 // the last seq durable
	syncing  bool   // an appender is in fdatasync (without mu)
	err      error  // sticky: ErrBroken
	closed   bool
	buf      []byte
	st       stats

	// amu guards the .ack side files and their group commit. Lock order:
	// mu, then amu (Ack never takes mu while it holds amu).
	amu        sync.Mutex
	ackDone    *sync.Cond // on amu
	ackDirty   map[*segment]struct{}
	ackWritten uint64 // acks written, counted
	ackSynced  uint64 // acks durable, counted
	ackSyncing bool
	ackErr     error
	ackClosed  bool
}

// stats are the journal's counters (under mu, except ackSyncs under amu).
type stats struct {
	appends, bytes, syncs, acks, ackSyncs, segmentsDeleted, tornTail, corrupt uint64
}

// Open opens (or creates) the journal in cfg.Dir. It scans every segment
// and its acks: a torn last frame is cut off and counted (torn_tail), a
// corrupt frame is skipped and counted (corrupt), and segments whose
// entries are all acked are deleted. Unacked entries are then pending, for
// Replay.
func Open(cfg Config) (*Journal, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: create the directory %s: %w (check the path and its permissions)", cfg.Dir, err)
	}
	lock, err := lockDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	j := &Journal{
		cfg:      cfg,
		log:      cfg.Log.With().Str("journal", cfg.Dir).Logger(),
		lock:     lock,
		pending:  map[uint64]entry{},
		next:     1,
		ackDirty: map[*segment]struct{}{},
	}
	j.syncDone = sync.NewCond(&j.mu)
	j.ackDone = sync.NewCond(&j.amu)
	if err := j.load(); err != nil {
		j.closeFiles()
		return nil, err
	}
	j.written = j.next - 1
	j.synced = j.written
	return j, nil
}

// load scans the directory (at Open, before anyone else sees j).
func (j *Journal) load() error {
	names, err := os.ReadDir(j.cfg.Dir)
	if err != nil {
		return fmt.Errorf("journal: read the directory %s: %w", j.cfg.Dir, err)
	}
	var firsts []uint64
	acks := map[uint64]bool{}
	for _, de := range names {
		if first, ok := parseSegName(de.Name(), walExt); ok && de.Type().IsRegular() {
			firsts = append(firsts, first)
		} else if first, ok := parseSegName(de.Name(), ackExt); ok && de.Type().IsRegular() {
			acks[first] = true
		}
	}
	// os.ReadDir sorts by name, and the names are fixed-width numbers.
	for i, first := range firsts {
		last := i == len(firsts)-1
		if err := j.loadSegment(first, last, acks[first]); err != nil {
			return err
		}
		delete(acks, first)
		if first > j.next {
			j.next = first
		}
	}
	for first := range acks { // side files whose segment is gone
		path := filepath.Join(j.cfg.Dir, segName(first)+ackExt)
		if err := os.Remove(path); err != nil {
			j.log.Warn().Err(err).Str("file", path).Msg("journal: cannot remove an ack file whose segment is gone")
		}
	}
	if len(j.segs) == 0 {
		if err := j.newSegmentLocked(); err != nil {
			return err
		}
	} else {
		s := j.segs[len(j.segs)-1]
		f, err := os.OpenFile(s.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("journal: open the segment %s: %w", s.path, err)
		}
		j.cur = f
	}
	// Segments all acked (and not the last) go now.
	for _, s := range append([]*segment(nil), j.segs[:len(j.segs)-1]...) {
		if s.unacked == 0 {
			j.deleteSegmentLocked(s)
		}
	}
	return nil
}

// loadSegment scans one segment and its acks.
func (j *Journal) loadSegment(first uint64, last, hasAcks bool) error {
	path := filepath.Join(j.cfg.Dir, segName(first)+walExt)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("journal: read the segment %s: %w", path, err)
	}
	res := scan(data, first, rules{})
	s := &segment{first: first, path: path, size: res.end, corrupt: res.corrupt}
	if res.corrupt > 0 {
		j.st.corrupt += uint64(res.corrupt)
		j.log.Error().Str("segment", filepath.Base(path)).Int("runs", res.corrupt).
			Msg("journal: corrupt frames skipped; the entries in them are lost, the frames after them were kept")
	}
	if res.tail {
		if last {
			// A crash mid-write: the frame never was durable (its Append
			// had not returned), so it is cut off and the segment goes on
			// from the last whole frame.
			if err := truncateSync(path, res.end); err != nil {
				return fmt.Errorf("journal: cut the torn tail of %s at %d: %w", path, res.end, err)
			}
			j.st.tornTail++
			j.log.Warn().Str("segment", filepath.Base(path)).Int64("offset", res.end).Int64("bytes", int64(len(data))-res.end).
				Msg("journal: torn last frame cut off (a crash while it was written)")
		} else {
			// A sealed segment was synced whole before the next began:
			// bad bytes at its end are corruption, not a crash.
			j.st.corrupt++
			s.corrupt++
			j.log.Error().Str("segment", filepath.Base(path)).Int64("offset", res.end).
				Msg("journal: corrupt bytes at the end of a sealed segment skipped")
		}
	}
	acked := map[uint64]bool{}
	if hasAcks {
		apath := s.ackPath()
		adata, err := os.ReadFile(apath)
		if err != nil {
			return fmt.Errorf("journal: read the ack file %s: %w", apath, err)
		}
		ares := scan(adata, first, rules{acks: true})
		if ares.corrupt > 0 {
			j.st.corrupt += uint64(ares.corrupt)
			j.log.Error().Str("ack_file", filepath.Base(apath)).Int("runs", ares.corrupt).
				Msg("journal: corrupt ack frames skipped (their entries will be replayed again)")
		}
		if ares.tail {
			if err := truncateSync(apath, ares.end); err != nil {
				return fmt.Errorf("journal: cut the torn tail of %s at %d: %w", apath, ares.end, err)
			}
			j.st.tornTail++
			j.log.Warn().Str("ack_file", filepath.Base(apath)).Int64("offset", ares.end).
				Msg("journal: torn last ack cut off (a crash while it was written)")
		}
		for _, f := range ares.frames {
			acked[f.seq] = true
		}
		s.ackSize = ares.end
	}
	for _, f := range res.frames {
		if f.seq >= j.next {
			j.next = f.seq + 1
		}
		if acked[f.seq] {
			continue
		}
		j.pending[f.seq] = entry{seg: s, off: f.off, n: f.n}
		s.unacked++
	}
	j.segs = append(j.segs, s)
	return nil
}

// truncateSync cuts path at size and makes the cut durable.
func truncateSync(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = datasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// newSegmentLocked creates the segment that starts at j.next and makes it
// the current one (the previous current file, if any, is already closed).
func (j *Journal) newSegmentLocked() error {
	path := filepath.Join(j.cfg.Dir, segName(j.next)+walExt)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%w: create the segment %s: %v", ErrWrite, path, err)
	}
	if err := syncDir(j.cfg.Dir); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("%w: sync the directory %s: %v", ErrWrite, j.cfg.Dir, err)
	}
	j.cur = f
	j.segs = append(j.segs, &segment{first: j.next, path: path})
	return nil
}

// usableLocked says why the journal takes no more calls, if it does not.
func (j *Journal) usableLocked() error {
	if j.closed {
		return ErrClosed
	}
	return j.err
}

// failLocked breaks the journal for good (see ErrBroken).
func (j *Journal) failLocked(err error) {
	if j.err == nil {
		j.err = err
		j.log.Error().Err(err).Msg("journal: broken; it refuses every call until it is opened again")
	}
	j.syncDone.Broadcast()
}

// Append writes one entry and returns its seq once it is on disk
// (fdatasync'd). Appends arriving while a sync runs wait for the next one
// and share it. kind is the caller's (1 to FirstReservedKind-1); the
// payload is at most MaxPayload bytes and is not kept.
func (j *Journal) Append(kind byte, payload []byte) (uint64, error) {
	if kind == 0 || kind >= FirstReservedKind {
		return 0, fmt.Errorf("%w: %d (kinds are 1 to %d; 0 and %d-255 are the journal's own)", ErrKind, kind, FirstReservedKind-1, FirstReservedKind)
	}
	if len(payload) > MaxPayload {
		return 0, fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, len(payload), MaxPayload)
	}
	size := int64(headerSize + len(payload))
	j.mu.Lock()
	defer j.mu.Unlock()
	for {
		if err := j.usableLocked(); err != nil {
			return 0, err
		}
		s := j.segs[len(j.segs)-1]
		if s.size == 0 || s.size+size <= j.cfg.SegmentBytes {
			break
		}
		if j.syncing { // the sync in flight uses the current file
			j.syncDone.Wait()
			continue
		}
		if err := j.rotateLocked(); err != nil {
			return 0, err
		}
	}
	s := j.segs[len(j.segs)-1]
	seq := j.next
	j.buf = appendFrame(j.buf[:0], seq, kind, payload)
	buf := j.buf
	if cap(j.buf) > 1<<20 {
		j.buf = nil // a big payload's buffer is not kept
	}
	if _, err := j.cur.WriteAt(buf, s.size); err != nil {
		// A short write leaves part of a frame: cut it, so the next
		// frame starts where this one did.
		if terr := j.cur.Truncate(s.size); terr != nil {
			j.failLocked(fmt.Errorf("%w: a write failed (%v) and cutting it off failed too: %v", ErrBroken, err, terr))
			return 0, j.err
		}
		return 0, fmt.Errorf("%w: %s: %v (free disk space under %s)", ErrWrite, filepath.Base(s.path), err, j.cfg.Dir)
	}
	j.pending[seq] = entry{seg: s, off: s.size, n: uint32(len(payload))}
	s.size += size
	s.unacked++
	j.next++
	j.written = seq
	j.st.appends++
	j.st.bytes += uint64(size)
	for j.synced < seq {
		if j.err != nil {
			return 0, j.err
		}
		if j.syncing {
			j.syncDone.Wait()
			continue
		}
		j.syncLocked()
	}
	return seq, nil
}

// syncLocked runs one group commit: it syncs the current file without mu
// (others write meanwhile, for the next one) and then marks every seq
// written before it began as durable.
func (j *Journal) syncLocked() {
	j.syncing = true
	target, f := j.written, j.cur
	j.mu.Unlock()
	err := datasync(f)
	j.mu.Lock()
	j.syncing = false
	j.st.syncs++
	if err != nil {
		j.failLocked(fmt.Errorf("%w: fdatasync of %s: %v", ErrBroken, filepath.Base(j.segs[len(j.segs)-1].path), err))
		return
	}
	if target > j.synced {
		j.synced = target
	}
	j.syncDone.Broadcast()
}

// rotateLocked seals the current segment (synced, closed) and starts the
// next. No sync is in flight (the caller waited), so none uses the file.
func (j *Journal) rotateLocked() error {
	old := j.segs[len(j.segs)-1]
	if err := datasync(j.cur); err != nil {
		j.failLocked(fmt.Errorf("%w: fdatasync of %s: %v", ErrBroken, filepath.Base(old.path), err))
		return j.err
	}
	j.st.syncs++
	j.synced = j.written
	j.syncDone.Broadcast()
	if err := j.cur.Close(); err != nil {
		j.failLocked(fmt.Errorf("%w: close %s: %v", ErrBroken, filepath.Base(old.path), err))
		return j.err
	}
	j.cur = nil
	if err := j.newSegmentLocked(); err != nil {
		// Nothing is current: reopen the old one, so the journal goes on
		// there (past its size) until a rotation works.
		f, oerr := os.OpenFile(old.path, os.O_RDWR, 0)
		if oerr != nil {
			j.failLocked(fmt.Errorf("%w: %v, and reopening %s failed: %v", ErrBroken, err, filepath.Base(old.path), oerr))
			return j.err
		}
		j.cur = f
		return err
	}
	if old.unacked == 0 {
		j.deleteSegmentLocked(old)
	}
	return nil
}

// deleteSegmentLocked removes a sealed segment whose entries are all acked:
// the .wal first (and the directory synced), then its .ack. A crash in
// between leaves an ack file without a segment (removed at Open); the
// other order could bring back a segment without its acks.
func (j *Journal) deleteSegmentLocked(s *segment) {
	for i, t := range j.segs {
		if t == s {
			j.segs = append(j.segs[:i], j.segs[i+1:]...)
			break
		}
	}
	if err := os.Remove(s.path); err != nil {
		j.log.Warn().Err(err).Str("segment", filepath.Base(s.path)).Msg("journal: cannot remove a segment all acked (Open tries again)")
		return
	}
	if err := syncDir(j.cfg.Dir); err != nil {
		j.log.Warn().Err(err).Str("segment", filepath.Base(s.path)).Msg("journal: cannot sync the directory after removing a segment")
		return
	}
	j.amu.Lock()
	for j.ackSyncing { // the ack sync in flight may use this file
		j.ackDone.Wait()
	}
	s.gone = true
	delete(j.ackDirty, s)
	if s.ack != nil {
		s.ack.Close()
		s.ack = nil
	}
	j.amu.Unlock()
	if err := os.Remove(s.ackPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		j.log.Warn().Err(err).Str("ack_file", filepath.Base(s.ackPath())).Msg("journal: cannot remove the ack file of a removed segment (Open tries again)")
	}
	j.st.segmentsDeleted++
}

// Pending is how many entries are not acked.
func (j *Journal) Pending() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.pending)
}

// Stats are the journal's counters: appends, bytes (appended, frames
// included), syncs (fdatasyncs of segments), acks, ack_syncs, pending,
// segments (on disk), segments_deleted, torn_tail (torn frames cut at
// Open) and corrupt (runs of bad bytes skipped at Open or Replay).
func (j *Journal) Stats() map[string]uint64 {
	j.amu.Lock()
	ackSyncs := j.st.ackSyncs
	j.amu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	return map[string]uint64{
		"appends":          j.st.appends,
		"bytes":            j.st.bytes,
		"syncs":            j.st.syncs,
		"acks":             j.st.acks,
		"ack_syncs":        ackSyncs,
		"pending":          uint64(len(j.pending)),
		"segments":         uint64(len(j.segs)),
		"segments_deleted": j.st.segmentsDeleted,
		"torn_tail":        j.st.tornTail,
		"corrupt":          j.st.corrupt,
	}
}

// Close syncs what was written, waits for the syncs in flight and closes
// the files. Appends and acks waiting on a sync return once it is done;
// later calls get ErrClosed. Close is idempotent.
func (j *Journal) Close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	for j.syncing {
		j.syncDone.Wait()
	}
	var err error
	if j.err == nil && j.written > j.synced {
		if serr := datasync(j.cur); serr != nil {
			j.failLocked(fmt.Errorf("%w: fdatasync of %s at close: %v", ErrBroken, filepath.Base(j.segs[len(j.segs)-1].path), serr))
			err = j.err
		} else {
			j.st.syncs++
			j.synced = j.written
		}
	}
	j.syncDone.Broadcast()
	j.mu.Unlock()

	j.amu.Lock()
	j.ackClosed = true
	for j.ackSyncing {
		j.ackDone.Wait()
	}
	if j.ackErr == nil && j.ackWritten > j.ackSynced {
		if serr := j.syncAcksLocked(); serr != nil && err == nil {
			err = serr
		}
	}
	j.ackDone.Broadcast()
	j.amu.Unlock()

	j.mu.Lock()
	defer j.mu.Unlock()
	j.closeFiles()
	return err
}

// closeFiles closes every file (at Close, or when Open fails).
func (j *Journal) closeFiles() {
	if j.cur != nil {
		j.cur.Close()
		j.cur = nil
	}
	j.amu.Lock()
	for _, s := range j.segs {
		if s.ack != nil {
			s.ack.Close()
			s.ack = nil
		}
	}
	j.amu.Unlock()
	if j.lock != nil {
		j.lock.Close() // drops the flock
		j.lock = nil
	}
}
