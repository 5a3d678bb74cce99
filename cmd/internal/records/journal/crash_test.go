package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// writeFrames appends n entries to a fresh journal in dir and closes it;
// it returns them and the offset of each frame in the one segment.
func writeFrames(t *testing.T, dir string, n int) ([]got, []int64) {
	t.Helper()
	j := openT(t, dir, 0)
	var want []got
	var offs []int64
	off := int64(0)
	for i := range n {
		p := fmt.Sprintf("frame %d %s", i, string(make([]byte, i*3)))
		seq := appendT(t, j, byte(1+i%5), p)
		want = append(want, got{seq, byte(1 + i%5), p})
		offs = append(offs, off)
		off += int64(headerSize + len(p))
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return want, offs
}

// A crash while the last frame was written, simulated by cutting the
// segment at every byte offset of that frame: Open brings back every
// complete frame, cuts the torn one (counted as torn_tail) and appends go
// on from there. Catches a scan that drops the frames before a torn one,
// or keeps the torn bytes: seen failing with loadSegment's truncateSync
// skipped (the segment keeps its torn bytes).
func TestTornTailEveryOffset(t *testing.T) {
	src := t.TempDir()
	want, offs := writeFrames(t, src, 6)
	data, err := os.ReadFile(filepath.Join(src, segName(1)+walExt))
	if err != nil {
		t.Fatal(err)
	}
	lastStart := offs[len(offs)-1]
	for cut := lastStart; cut < int64(len(data)); cut++ {
		t.Run(fmt.Sprint("cut=", cut), func(t *testing.T) {
			dir := t.TempDir()
			seg := filepath.Join(dir, segName(1)+walExt)
			if err := os.WriteFile(seg, data[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			j := openT(t, dir, 0)
			if g := replayAll(t, j); !slices.Equal(g, want[:len(want)-1]) {
				t.Fatalf("replay: %v\nwant %v", g, want[:len(want)-1])
			}
			wantTorn := uint64(0)
			if cut > lastStart {
				wantTorn = 1
			}
			st := j.Stats()
			if st["torn_tail"] != wantTorn || st["corrupt"] != 0 {
				t.Fatalf("torn_tail %d corrupt %d, want %d and 0", st["torn_tail"], st["corrupt"], wantTorn)
			}
			if fi, err := os.Stat(seg); err != nil || fi.Size() != lastStart {
				t.Fatalf("segment size after Open: %v %v, want %d", fi.Size(), err, lastStart)
			}
			// The journal goes on where the torn frame began.
			seq := appendT(t, j, 7, "after the crash")
			j.Close()
			j2 := openT(t, dir, 0)
			wantAfter := append(slices.Clone(want[:len(want)-1]), got{seq, 7, "after the crash"})
			if g := replayAll(t, j2); !slices.Equal(g, wantAfter) {
				t.Fatalf("replay after the next append: %v\nwant %v", g, wantAfter)
			}
			if st := j2.Stats(); st["torn_tail"] != 0 || st["corrupt"] != 0 {
				t.Fatalf("second Open found torn_tail %d corrupt %d: the tail was not cut", st["torn_tail"], st["corrupt"])
			}
		})
	}
}

// A bad byte anywhere in a frame in the middle (length, CRC, kind, seq or
// payload): that frame is skipped and counted as corrupt, every frame
// after it still replays. Catches a scan that stops at the first bad
// frame (treating it as the tail): seen failing with scan's resync
// replaced by a break.
func TestCorruptMiddleFrame(t *testing.T) {
	src := t.TempDir()
	want, offs := writeFrames(t, src, 8)
	data, err := os.ReadFile(filepath.Join(src, segName(1)+walExt))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []int{0, 3, 6} {
		end := int64(len(data))
		if bad+1 < len(offs) {
			end = offs[bad+1]
		}
		for pos := offs[bad]; pos < end; pos++ {
			for _, flip := range []byte{0x01, 0x80, 0xff} {
				name := fmt.Sprintf("frame=%d/byte=%d/xor=%#x", bad, pos-offs[bad], flip)
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					mut := slices.Clone(data)
					mut[pos] ^= flip
					if err := os.WriteFile(filepath.Join(dir, segName(1)+walExt), mut, 0o600); err != nil {
						t.Fatal(err)
					}
					j := openT(t, dir, 0)
					wantKept := slices.Delete(slices.Clone(want), bad, bad+1)
					if g := replayAll(t, j); !slices.Equal(g, wantKept) {
						t.Fatalf("replay: %v\nwant %v", g, wantKept)
					}
					if st := j.Stats(); st["corrupt"] != 1 || st["torn_tail"] != 0 {
						t.Fatalf("corrupt %d torn_tail %d, want 1 and 0", st["corrupt"], st["torn_tail"])
					}
				})
			}
		}
	}
}

// Garbage at the end of a sealed segment (one with a segment after it) is
// corruption, not a torn write: counted as corrupt, the segment not cut,
// the next segment's entries replayed.
func TestCorruptSealedTail(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 64)
	var want []got
	for i := range 6 {
		p := fmt.Sprintf("entry %02d %s", i, "abcdefghijklmnopqrstu")
		want = append(want, got{appendT(t, j, 1, p), 1, p})
	}
	j.Close()
	segs := segFiles(t, dir, walExt)
	if len(segs) < 3 {
		t.Fatalf("segments %v, want at least 3", segs)
	}
	first := filepath.Join(dir, segs[0])
	data, _ := os.ReadFile(first)
	if err := os.WriteFile(first, append(data, "not a frame, just bytes"...), 0o600); err != nil {
		t.Fatal(err)
	}
	j2 := openT(t, dir, 64)
	if g := replayAll(t, j2); !slices.Equal(g, want) {
		t.Fatalf("replay %v\nwant %v", g, want)
	}
	if st := j2.Stats(); st["corrupt"] != 1 || st["torn_tail"] != 0 {
		t.Fatalf("corrupt %d torn_tail %d, want 1 and 0", st["corrupt"], st["torn_tail"])
	}
}

// A torn last ack (a crash mid-Ack, before it returned) is cut: the
// entry replays again, the acks before it hold, and later acks land
// after the cut.
func TestTornAck(t *testing.T) {
	dir := t.TempDir()
	j := openT(t, dir, 0)
	for i := range 4 {
		appendT(t, j, 1, fmt.Sprint(i))
	}
	for _, seq := range []uint64{1, 2} {
		if err := j.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	ack := filepath.Join(dir, segName(1)+ackExt)
	data, _ := os.ReadFile(ack)
	if len(data) != 2*headerSize {
		t.Fatalf("ack file %d bytes, want %d", len(data), 2*headerSize)
	}
	if err := os.WriteFile(ack, data[:len(data)-5], 0o600); err != nil {
		t.Fatal(err)
	}
	j2 := openT(t, dir, 0)
	if g := replayAll(t, j2); !slices.Equal(g, []got{{2, 1, "1"}, {3, 1, "2"}, {4, 1, "3"}}) {
		t.Fatalf("replay %v", g)
	}
	if st := j2.Stats(); st["torn_tail"] != 1 {
		t.Fatalf("torn_tail %d, want 1", st["torn_tail"])
	}
	if err := j2.Ack(3); err != nil {
		t.Fatal(err)
	}
	j2.Close()
	j3 := openT(t, dir, 0)
	if g := replayAll(t, j3); !slices.Equal(g, []got{{2, 1, "1"}, {4, 1, "3"}}) {
		t.Fatalf("replay after the next ack %v", g)
	}
}
