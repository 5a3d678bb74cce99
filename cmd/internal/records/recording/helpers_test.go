package recording_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/records"
	"github.com/brisvox/brisvox/messages"
)

// stereo is a recording read back: its rate and channels.
type stereo struct {
	rate        int
	left, right []int16
}

// readStereo reads a finished recording and checks its header against the
// file: RIFF and data sizes, stereo PCM16, the byte rate.
func readStereo(t *testing.T, dir string, rec *records.Recording) stereo {
	t.Helper()
	if rec == nil {
		t.Fatal("no recording")
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rec.Key)))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != rec.Bytes {
		t.Fatalf("file of %d bytes, the account says %d", len(b), rec.Bytes)
	}
	le := binary.LittleEndian
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" {
		t.Fatalf("not a WAV header: %q", b[:min(len(b), 44)])
	}
	if got := le.Uint32(b[4:8]); int(got) != len(b)-8 {
		t.Fatalf("RIFF size %d, file %d bytes", got, len(b))
	}
	if got := le.Uint32(b[40:44]); int(got) != len(b)-44 {
		t.Fatalf("data size %d, file %d bytes", got, len(b))
	}
	rate := int(le.Uint32(b[24:28]))
	if le.Uint16(b[20:22]) != 1 || le.Uint16(b[22:24]) != 2 || le.Uint16(b[34:36]) != 16 ||
		le.Uint16(b[32:34]) != 4 || int(le.Uint32(b[28:32])) != rate*4 {
		t.Fatalf("not stereo PCM16: % x", b[20:36])
	}
	var s stereo
	s.rate = rate
	for p := 44; p+4 <= len(b); p += 4 {
		s.left = append(s.left, int16(le.Uint16(b[p:])))
		s.right = append(s.right, int16(le.Uint16(b[p+2:])))
	}
	if got := float64(len(s.left)) * 1000 / float64(rate); got != rec.DurationMS {
		t.Fatalf("%v ms of samples, the account says %v", got, rec.DurationMS)
	}
	return s
}

// loud is a level no resampler's ringing on silence reaches.
const loud = 1000

// firstLoud is the first sample at or after from whose magnitude is loud,
// or -1.
func firstLoud(pcm []int16, from int) int {
	for i := max(from, 0); i < len(pcm); i++ {
		if pcm[i] > loud || pcm[i] < -loud {
			return i
		}
	}
	return -1
}

// lastLoud is one past the last loud sample before to, or -1.
func lastLoud(pcm []int16, to int) int {
	for i := min(to, len(pcm)) - 1; i >= 0; i-- {
		if pcm[i] > loud || pcm[i] < -loud {
			return i + 1
		}
	}
	return -1
}

// silentBetween says whether pcm[from:to] is all zeros.
func silentBetween(pcm []int16, from, to int) bool {
	for _, v := range pcm[max(from, 0):min(to, len(pcm))] {
		if v != 0 {
			return false
		}
	}
	return true
}

// square fills pcm with a square wave of amplitude a.
func square(pcm []int16, a int16) {
	for i := range pcm {
		if i/20%2 == 0 {
			pcm[i] = a
		} else {
			pcm[i] = -a
		}
	}
}

// at is the sample of the file at offset d.
func (s stereo) at(d time.Duration) int { return int(d * time.Duration(s.rate) / time.Second) }

// frameSamples is one frame at the file's rate.
func (s stereo) frameSamples() int { return s.rate / 50 }

const frame = messages.FrameDuration
