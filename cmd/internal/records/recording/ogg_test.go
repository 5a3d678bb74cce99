//go:build cgo

package recording_test

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/cmd/internal/records/recording"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	hraban "gopkg.in/hraban/opus.v2"
)

// oggCRC is the Ogg checksum, computed bit by bit (the code under test
// uses a table).
func oggCRC(p []byte) uint32 {
	var c uint32
	for _, b := range p {
		c ^= uint32(b) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// readOgg checks an Ogg Opus file's pages (capture pattern, checksum,
// sequence, BOS first and EOS last, one stream, granules rising), its
// OpusHead and OpusTags, and returns the audio packets and the last
// granule.
func readOgg(t *testing.T, b []byte) (packets [][]byte, granule int64, head []byte) {
	t.Helper()
	le := binary.LittleEndian
	var pkt []byte
	var all [][]byte
	seq, serial := uint32(0), uint32(0)
	last := int64(-1)
	for p := 0; p < len(b); {
		if len(b)-p < 27 || string(b[p:p+4]) != "OggS" || b[p+4] != 0 {
			t.Fatalf("no page at byte %d", p)
		}
		flags, nseg := b[p+5], int(b[p+26])
		g := int64(le.Uint64(b[p+6:]))
		if s := le.Uint32(b[p+14:]); seq == 0 {
			serial = s
		} else if s != serial {
			t.Fatalf("page %d of another stream", seq)
		}
		if got := le.Uint32(b[p+18:]); got != seq {
			t.Fatalf("page sequence %d, want %d", got, seq)
		}
		lacing := b[p+27 : p+27+nseg]
		size := 27 + nseg
		for _, l := range lacing {
			size += int(l)
		}
		page := append([]byte(nil), b[p:p+size]...)
		want := le.Uint32(page[22:])
		clear(page[22:26])
		if oggCRC(page) != want {
			t.Fatalf("page %d: checksum %08x, want %08x", seq, oggCRC(page), want)
		}
		if (flags&0x02 != 0) != (seq == 0) || (flags&0x04 != 0) != (p+size == len(b)) {
			t.Fatalf("page %d flags %x", seq, flags)
		}
		if g < last {
			t.Fatalf("page %d granule %d after %d", seq, g, last)
		}
		last = g
		body := b[p+27+nseg : p+size]
		for _, l := range lacing {
			pkt = append(pkt, body[:l]...)
			body = body[l:]
			if l < 255 {
				all = append(all, pkt)
				pkt = nil
			}
		}
		p += size
		seq++
	}
	if len(all) < 2 || string(all[0][:8]) != "OpusHead" || string(all[1][:8]) != "OpusTags" {
		t.Fatalf("no OpusHead and OpusTags")
	}
	return all[2:], last, all[0]
}

// TestOggRecording: the same script as TestChannelsLineUp recorded as
// Opus in Ogg: every page whole (checksums, sequence, BOS and EOS), the
// head says stereo at the call's rate with the pre-skip, the last granule
// is the call's length, and decoded, the caller's speech and the bot's
// answer are where they happened (within a frame) and the paused span is
// quiet, and the caller does not leak into the bot's channel. Mutations
// caught (each seen failing): the checksum's table made reflected (every
// page's checksum wrong); the bit rate at 48 kbit/s (the caller leaks).
func TestOggRecording(t *testing.T) {
	defer goleak.VerifyNone(t)
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		r, err := recording.New(recording.Config{Dir: dir, Format: "ogg", Log: zerolog.New(io.Discard)})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		s := script{ticks: 200,
			callerSpeaks: [][2]int{{25, 75}, {140, 190}},
			botSpeaks:    [][2]int{{90, 120}, {140, 190}},
			pauseAt:      150, resumeAt: 175}
		t0 := time.Now()
		c, err := r.Begin("ogg-call", 16000, 16000)
		if err != nil {
			t.Fatal(err)
		}
		s.drive(c, t0, 16000, 16000)
		rec := c.Close()
		if rec == nil || rec.Format != "ogg" || filepath.Ext(rec.Key) != ".ogg" || rec.DurationMS != 4000 {
			t.Fatalf("account %+v", rec)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rec.Key)))
		if err != nil || int64(len(b)) != rec.Bytes {
			t.Fatalf("%d bytes (%v), the account says %d", len(b), err, rec.Bytes)
		}
		packets, granule, head := readOgg(t, b)
		le := binary.LittleEndian
		preSkip := int(le.Uint16(head[10:]))
		if head[9] != 2 || le.Uint32(head[12:]) != 16000 || preSkip != 312 {
			t.Fatalf("OpusHead % x", head)
		}
		if len(packets) != 200 || granule != int64(preSkip)+200*960 {
			t.Fatalf("%d packets to granule %d, want 200 to %d", len(packets), granule, preSkip+200*960)
		}
		dec, err := hraban.NewDecoder(48000, 2)
		if err != nil {
			t.Fatal(err)
		}
		var f stereo
		f.rate = 48000
		pcm := make([]int16, 2*960)
		for _, p := range packets {
			n, err := dec.Decode(p, pcm)
			if err != nil {
				t.Fatal(err)
			}
			for j := range n {
				f.left = append(f.left, pcm[2*j])
				f.right = append(f.right, pcm[2*j+1])
			}
		}
		f.left, f.right = f.left[preSkip:], f.right[preSkip:]
		fs := f.frameSamples()
		near := func(what string, got int, want time.Duration) {
			t.Helper()
			if w := f.at(want); got < w-fs || got > w+fs {
				t.Errorf("%s at %v, want %v within a frame", what, time.Duration(got)*time.Second/48000, want)
			}
		}
		near("the caller's speech", firstLoud(f.left, 0), 25*frame)
		near("the caller's speech's end", lastLoud(f.left, f.at(100*frame)), 75*frame)
		near("the bot's answer", firstLoud(f.right, 0), 91*frame)
		near("the bot's answer's end", lastLoud(f.right, f.at(130*frame)), 121*frame)
		// The channels are coded jointly: how much of the caller leaks
		// into the bot's channel while only the caller speaks.
		leak := 0
		for _, v := range f.right[f.at(30*frame):f.at(70*frame)] {
			leak = max(leak, int(v), -int(v))
		}
		t.Logf("the caller's 8000 leaks into the bot's channel at most %d", leak)
		if leak > 800 {
			t.Errorf("the caller leaks into the bot's channel at %d of 8000", leak)
		}
		// Lossy: the paused span (3.02 s to 3.52 s) is quiet after the
		// codec's tail of the audio before it.
		from, to := f.at(151*frame), f.at(176*frame)
		for _, ch := range [][]int16{f.left, f.right} {
			if got := firstLoud(ch, from+fs); got < to-fs/2 {
				t.Errorf("loud at %v in the paused span", time.Duration(got)*time.Second/48000)
			}
		}
		if kbps := float64(len(b)) * 8 / 4 / 1000; kbps > 70 {
			t.Errorf("%.0f kbit/s, want about 64", kbps)
		}
		if _, err := r.Open(rec.Key); err != nil {
			t.Fatal(err)
		}
		if err := r.Remove(records.Recording{Key: rec.Key}); err != nil {
			t.Fatal(err)
		}
	})
}
