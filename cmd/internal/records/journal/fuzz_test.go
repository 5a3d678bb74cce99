package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

// fuzzSeeds are segments worth starting from: whole, torn, corrupt.
func fuzzSeeds() [][2][]byte {
	var seg []byte
	for i := range 4 {
		seg = appendFrame(seg, uint64(1+i), byte(1+i), bytes.Repeat([]byte{byte('a' + i)}, 5*i))
	}
	ack := appendFrame(nil, 2, kindAck, nil)
	corrupt := bytes.Clone(seg)
	corrupt[headerSize+2] ^= 0xff
	return [][2][]byte{
		{seg, nil},
		{seg, ack},
		{seg[:len(seg)-3], ack[:9]},
		{corrupt, ack},
		{append(bytes.Clone(seg), 0, 0, 0, 0, 0, 0, 0, 0), nil},
	}
}

// FuzzOpen writes arbitrary bytes as a segment and its ack file and opens
// the journal: Open never panics, and every entry Replay returns is a
// frame that was really in the bytes, whole with a good CRC (its exact
// encoding is found there). The journal then still takes appends, and a
// reopen replays the same entries plus the new one.
func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, seg, acks []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segName(1)+walExt), seg, 0o600); err != nil {
			t.Fatal(err)
		}
		if len(acks) > 0 {
			if err := os.WriteFile(filepath.Join(dir, segName(1)+ackExt), acks, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		j, err := Open(Config{Dir: dir, Log: zerolog.Nop()})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer j.Close()
		var first []got
		if err := j.Replay(func(seq uint64, kind byte, p []byte) error {
			if !bytes.Contains(seg, appendFrame(nil, seq, kind, p)) {
				t.Fatalf("replayed seq %d kind %d (%d bytes): no such whole frame in the segment", seq, kind, len(p))
			}
			first = append(first, got{seq, kind, string(p)})
			return nil
		}); err != nil {
			t.Fatalf("Replay: %v", err)
		}
		seq, err := j.Append(1, []byte("after"))
		if err != nil {
			t.Fatalf("Append after Open: %v", err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		j2, err := Open(Config{Dir: dir, Log: zerolog.Nop()})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer j2.Close()
		var again []got
		if err := j2.Replay(func(seq uint64, kind byte, p []byte) error {
			again = append(again, got{seq, kind, string(p)})
			return nil
		}); err != nil {
			t.Fatalf("Replay after reopen: %v", err)
		}
		want := append(first, got{seq, 1, "after"})
		if len(again) != len(want) {
			t.Fatalf("after reopen %d entries, want %d", len(again), len(want))
		}
		for i := range want {
			if again[i] != want[i] {
				t.Fatalf("after reopen entry %d: seq %d, want %d", i, again[i].seq, want[i].seq)
			}
		}
	})
}

// FuzzScan feeds the frame decoder arbitrary bytes: no panic, frames in
// order and apart, each whole with a good CRC, seqs rising.
func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s[0], uint64(1), false)
		f.Add(s[1], uint64(1), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, first uint64, acks bool) {
		res := scan(data, first, rules{acks: acks})
		end := int64(0)
		var last uint64
		for i, fr := range res.frames {
			if fr.off < end || fr.off+fr.size() > int64(len(data)) {
				t.Fatalf("frame %d at %d+%d overlaps or runs past %d", i, fr.off, fr.size(), len(data))
			}
			whole := data[fr.off : fr.off+fr.size()]
			if got := appendFrame(nil, fr.seq, fr.kind, whole[headerSize:]); !bytes.Equal(got, whole) {
				t.Fatalf("frame %d at %d does not re-encode to its bytes (bad CRC or header)", i, fr.off)
			}
			if !acks && i > 0 && fr.seq <= last {
				t.Fatalf("frame %d seq %d after %d", i, fr.seq, last)
			}
			if fr.seq < first {
				t.Fatalf("frame %d seq %d below first %d", i, fr.seq, first)
			}
			last = fr.seq
			end = fr.off + fr.size()
		}
		if end != res.end {
			t.Fatalf("end %d, last frame ends at %d", res.end, end)
		}
		if res.tail == (res.end == int64(len(data))) {
			t.Fatalf("tail %v, but the frames end at %d of %d", res.tail, res.end, len(data))
		}
	})
}
