package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// got is one replayed entry.
type got struct {
	seq     uint64
	kind    byte
	payload string
}

func openT(t *testing.T, dir string, segBytes int64) *Journal {
	t.Helper()
	j, err := Open(Config{Dir: dir, SegmentBytes: segBytes, Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

func replayAll(t *testing.T, j *Journal) []got {
	t.Helper()
	var out []got
	if err := j.Replay(func(seq uint64, kind byte, p []byte) error {
		out = append(out, got{seq, kind, string(p)})
		return nil
	}); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return out
}

func appendT(t *testing.T, j *Journal, kind byte, payload string) uint64 {
	t.Helper()
	seq, err := j.Append(kind, []byte(payload))
	if err != nil {
		t.Fatalf("Append(%d, %q): %v", kind, payload, err)
	}
	return seq
}

func segFiles(t *testing.T, dir, ext string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if filepath.Ext(de.Name()) == ext {
			out = append(out, de.Name())
		}
	}
	return out
}

func TestAppendRefuses(t *testing.T) {
	j := openT(t, t.TempDir(), 0)
	for _, tc := range []struct {
		name    string
		kind    byte
		payload []byte
		want    error
	}{
		{"kind 0", 0, []byte("x"), ErrKind},
		{"first reserved kind", FirstReservedKind, []byte("x"), ErrKind},
		{"ack kind", kindAck, []byte("x"), ErrKind},
		{"too large", 1, make([]byte, MaxPayload+1), ErrTooLarge},
		{"largest kind", FirstReservedKind - 1, []byte("x"), nil},
		{"empty payload", 1, nil, nil},
		{"largest payload", 2, make([]byte, MaxPayload), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := j.Append(tc.kind, tc.payload)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Append: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"no dir", Config{}, ErrInvalidConfig},
		{"negative segment", Config{Dir: t.TempDir(), SegmentBytes: -1}, ErrInvalidConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Open(tc.cfg)
			if err == nil {
				j.Close()
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
		})
	}
}

// Catches a lock that is not taken (two journals interleaving frames in
// one directory): seen failing with lockDir returning a nil error.
func TestOpenLocksDir(t *testing.T) {
	dir := t.TempDir()
	openT(t, dir, 0)
	j, err := Open(Config{Dir: dir})
	if err == nil {
		j.Close()
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
}

func TestAppendReplayReopen(t *testing.T) {
	for _, tc := range []struct {
		name     string
		segBytes int64
		n        int
	}{
		{"one segment", 0, 50},
		{"a segment per frame", 1, 20},
		{"small segments", 200, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j := openT(t, dir, tc.segBytes)
			var want []got
			for i := range tc.n {
				p := fmt.Sprintf("entry %d %s", i, bytes.Repeat([]byte{'x'}, i))
				seq := appendT(t, j, byte(1+i%3), p)
				if seq != uint64(i+1) {
					t.Fatalf("seq %d, want %d", seq, i+1)
				}
				want = append(want, got{seq, byte(1 + i%3), p})
			}
			if g := replayAll(t, j); !slices.Equal(g, want) {
				t.Fatalf("replay before reopen: %d entries, want %d", len(g), len(want))
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j2 := openT(t, dir, tc.segBytes)
			if g := replayAll(t, j2); !slices.Equal(g, want) {
				t.Fatalf("replay after reopen: %v\nwant %v", g, want)
			}
			if p := j2.Pending(); p != tc.n {
				t.Fatalf("Pending %d, want %d", p, tc.n)
			}
			// Seqs go on after a reopen.
			if seq := appendT(t, j2, 1, "after"); seq != uint64(tc.n+1) {
				t.Fatalf("seq after reopen %d, want %d", seq, tc.n+1)
			}
		})
	}
}

// Catches acks kept only in memory (a replay after a restart returning
// acked entries): seen failing with writeAck returning before the frame
// is written.
func TestAcksSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 0)
	var want []got
	for i := range 10 {
		seq := appendT(t, j, 1, fmt.Sprint(i))
		if i%3 != 0 {
			want = append(want, got{seq, 1, fmt.Sprint(i)})
		}
	}
	for _, seq := range []uint64{1, 4, 7, 10} { // out of order is fine
		if err := j.Ack(seq); err != nil {
			t.Fatalf("Ack(%d): %v", seq, err)
		}
	}
	if err := j.Ack(4); err != nil { // twice: a no-op
		t.Fatalf("second Ack(4): %v", err)
	}
	if err := j.Ack(11); !errors.Is(err, ErrUnknownSeq) {
		t.Fatalf("Ack(11): %v, want ErrUnknownSeq", err)
	}
	if err := j.Ack(0); !errors.Is(err, ErrUnknownSeq) {
		t.Fatalf("Ack(0): %v, want ErrUnknownSeq", err)
	}
	if g := replayAll(t, j); !slices.Equal(g, want) {
		t.Fatalf("replay: %v, want %v", g, want)
	}
	j.Close()
	j2 := openT(t, dir, 0)
	if g := replayAll(t, j2); !slices.Equal(g, want) {
		t.Fatalf("replay after reopen: %v, want %v", g, want)
	}
	if st := j2.Stats(); st["pending"] != 6 {
		t.Fatalf("pending %d, want 6", st["pending"])
	}
}

// Catches segments never deleted, or the one being written deleted when
// its entries are all acked: seen failing with Ack's not-current check
// removed.
func TestSegmentDeletion(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 1) // a segment per entry
	var seqs []uint64
	for i := range 5 {
		seqs = append(seqs, appendT(t, j, 1, fmt.Sprint(i)))
	}
	if n := len(segFiles(t, dir, walExt)); n != 5 {
		t.Fatalf("%d segments, want 5", n)
	}
	// Acking the 2nd and 4th deletes theirs; the others stay.
	for _, seq := range []uint64{seqs[1], seqs[3]} {
		if err := j.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{segName(1) + walExt, segName(3) + walExt, segName(5) + walExt}
	if g := segFiles(t, dir, walExt); !slices.Equal(g, want) {
		t.Fatalf("segments %v, want %v", g, want)
	}
	if g := segFiles(t, dir, ackExt); len(g) != 0 {
		t.Fatalf("ack files left of deleted segments: %v", g)
	}
	// The current segment stays even when all acked.
	if err := j.Ack(seqs[4]); err != nil {
		t.Fatal(err)
	}
	if g := segFiles(t, dir, walExt); !slices.Contains(g, segName(5)+walExt) {
		t.Fatalf("the current segment was deleted: %v", g)
	}
	// The next append rotates: the old current one, all acked, goes.
	appendT(t, j, 1, "next")
	want = []string{segName(1) + walExt, segName(3) + walExt, segName(6) + walExt}
	if g := segFiles(t, dir, walExt); !slices.Equal(g, want) {
		t.Fatalf("segments after rotation %v, want %v", g, want)
	}
	st := j.Stats()
	if st["segments"] != 3 || st["segments_deleted"] != 3 {
		t.Fatalf("stats %v: want 3 segments, 3 deleted", st)
	}
	j.Close()
	j2 := openT(t, dir, 1)
	if g := replayAll(t, j2); !slices.Equal(g, []got{{1, 1, "0"}, {3, 1, "2"}, {6, 1, "next"}}) {
		t.Fatalf("replay after reopen: %v", g)
	}
}

// Segments found all acked at Open (a crash before their deletion) are
// deleted then, and an ack file whose segment is gone too.
func TestOpenDeletesAckedSegments(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 1)
	appendT(t, j, 1, "a")
	appendT(t, j, 1, "b")
	appendT(t, j, 1, "c")
	j.Close()
	// Acks written by hand: as if the process died before deleting.
	for _, seq := range []uint64{1, 2} {
		fr := appendFrame(nil, seq, kindAck, nil)
		if err := os.WriteFile(filepath.Join(dir, segName(seq)+ackExt), fr, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, segName(99)+ackExt), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j2 := openT(t, dir, 1)
	if g := segFiles(t, dir, walExt); !slices.Equal(g, []string{segName(3) + walExt}) {
		t.Fatalf("segments %v", g)
	}
	if g := segFiles(t, dir, ackExt); len(g) != 0 {
		t.Fatalf("ack files %v", g)
	}
	if g := replayAll(t, j2); !slices.Equal(g, []got{{3, 1, "c"}}) {
		t.Fatalf("replay %v", g)
	}
}

// Replay is safe while others append and ack; an Ack from inside fn
// works (the records writer's start-up: replay, put, ack).
func TestReplayAcksInside(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 64)
	for i := range 20 {
		appendT(t, j, 1, fmt.Sprint(i))
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 20 {
			if _, err := j.Append(2, []byte(fmt.Sprint("late", i))); err != nil {
				t.Errorf("Append: %v", err)
			}
		}
	})
	n := 0
	if err := j.Replay(func(seq uint64, kind byte, p []byte) error {
		n++
		return j.Ack(seq)
	}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n < 20 {
		t.Fatalf("replayed %d, want at least the 20 from before", n)
	}
	if p := j.Pending(); p != 40-n {
		t.Fatalf("pending %d, want %d", p, 40-n)
	}
	appendT(t, j, 3, "one more")
	stop := errors.New("stop")
	if err := j.Replay(func(uint64, byte, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("Replay's fn error not returned: %v", err)
	}
}

func TestClosed(t *testing.T) {
	j := openT(t, t.TempDir(), 0)
	seq := appendT(t, j, 1, "x")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := j.Append(1, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := j.Ack(seq); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ack after Close: %v", err)
	}
	if err := j.Replay(func(uint64, byte, []byte) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Replay after Close: %v", err)
	}
}

// Many appenders and an acker at once (run with -race): every seq handed
// out once, every entry back in order after a reopen, and fewer syncs
// than appends (they were shared; with an acker syncing its own file at
// the same time the filesystem's commits make the batches smaller, so
// TestGroupCommit checks their size).
func TestConcurrentAppendAck(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 4096)
	const writers, each = 16, 50
	seqs := make(chan uint64, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				seq, err := j.Append(1, fmt.Appendf(nil, "w%d-%d", w, i))
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				seqs <- seq
			}
		})
	}
	acked := map[uint64]bool{}
	var ackWG sync.WaitGroup
	toAck := make(chan uint64, writers*each)
	ackWG.Go(func() {
		for seq := range toAck {
			if err := j.Ack(seq); err != nil {
				t.Errorf("Ack(%d): %v", seq, err)
			}
		}
	})
	seen := map[uint64]bool{}
	for range writers * each {
		seq := <-seqs
		if seen[seq] {
			t.Fatalf("seq %d handed out twice", seq)
		}
		seen[seq] = true
		if seq%2 == 0 {
			acked[seq] = true
			toAck <- seq
		}
	}
	close(toAck)
	wg.Wait()
	ackWG.Wait()
	st := j.Stats()
	t.Logf("stats %v", st)
	if st["appends"] != writers*each || st["syncs"] >= st["appends"] {
		t.Fatalf("appends %d, syncs %d: want %d appends sharing syncs", st["appends"], st["syncs"], writers*each)
	}
	j.Close()
	j2 := openT(t, dir, 4096)
	g := replayAll(t, j2)
	if len(g) != writers*each-len(acked) {
		t.Fatalf("replayed %d, want %d", len(g), writers*each-len(acked))
	}
	for i, e := range g {
		if acked[e.seq] || (i > 0 && g[i-1].seq >= e.seq) {
			t.Fatalf("replay out of order or acked: %v", e)
		}
	}
}

// 16 appenders at once share fdatasyncs: while one syncs, the others
// write and wait for the next (about 8 an fdatasync here; 2 leaves room
// for a loaded machine). Catches a group commit that covers only the
// leader's own entry: seen failing with syncLocked's target set to
// synced+1 (800 syncs for 800 appends).
func TestGroupCommit(t *testing.T) {
	j := openT(t, t.TempDir(), 0)
	const writers, each = 16, 50
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if _, err := j.Append(1, []byte("an entry")); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := j.Stats()
	t.Logf("%d appends, %d syncs", st["appends"], st["syncs"])
	if st["appends"] != writers*each || 2*st["syncs"] > st["appends"] {
		t.Fatalf("appends %d, syncs %d: want %d appends, at least 2 a sync", st["appends"], st["syncs"], writers*each)
	}
}
