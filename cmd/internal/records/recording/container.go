package recording

import (
	"encoding/binary"
	"math"
	"os"

	"github.com/brisvox/brisvox/media"
)

// container turns a call's slots into a file's bytes: the stereo WAV,
// or Opus in Ogg.
type container interface {
	// begin is the file's first bytes.
	begin() []byte
	// slot takes one slot of both channels at the file's rate and returns
	// the bytes to stream now (maybe none, while a page fills) and how
	// many slots they complete.
	slot(left, right []int16) (p []byte, slots int, err error)
	// end is what closes the stream (Ogg: the last page) and the slots
	// it completes.
	end() ([]byte, int)
	// finish makes the file whole in place, given the bytes the disk took
	// and the slots they held, and returns its size and duration; ok
	// false: nothing worth keeping.
	finish(f *os.File, written int64, slots int64) (size int64, durationMS float64, ok bool, err error)
}

// wav is a stereo PCM16 WAV file: a 44-byte header whose sizes are
// written at the end, interleaved samples.
type wav struct {
	rate  int
	frame []byte
}

func newWAV(rate int) *wav { return &wav{rate: rate, frame: make([]byte, 4*(rate/50))} }

// begin writes the header with the sizes unknown while the call goes on:
// a reader of the .part file reads to its end.
func (w *wav) begin() []byte { return wavHeaderBytes(w.rate, math.MaxUint32-36) }

func (w *wav) slot(l, r []int16) ([]byte, int, error) {
	for j := range l {
		binary.LittleEndian.PutUint16(w.frame[4*j:], uint16(l[j]))
		binary.LittleEndian.PutUint16(w.frame[4*j+2:], uint16(r[j]))
	}
	return w.frame, 1, nil
}

func (w *wav) end() ([]byte, int) { return nil, 0 }

// finish cuts the data to whole stereo samples and writes the real sizes.
func (w *wav) finish(f *os.File, written, _ int64) (int64, float64, bool, error) {
	data := written - wavHeader
	data -= data % 4
	if data < 0 {
		return 0, 0, false, nil
	}
	err := f.Truncate(wavHeader + data)
	if err == nil {
		_, err = f.WriteAt(wavHeaderBytes(w.rate, data), 0)
	}
	return wavHeader + data, float64(data/4) * 1000 / float64(w.rate), true, err
}

// wavHeaderBytes is the header of a stereo PCM16 file at rate with data
// bytes of samples.
func wavHeaderBytes(rate int, data int64) []byte {
	h := make([]byte, wavHeader)
	copy(h[0:4], "RIFF")
	binary.LittleEndian.PutUint32(h[4:8], uint32(36+data))
	copy(h[8:16], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:20], 16)
	binary.LittleEndian.PutUint16(h[20:22], media.WAVFormatPCM)
	binary.LittleEndian.PutUint16(h[22:24], 2)
	binary.LittleEndian.PutUint32(h[24:28], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:32], uint32(rate*4))
	binary.LittleEndian.PutUint16(h[32:34], 4)
	binary.LittleEndian.PutUint16(h[34:36], 16)
	copy(h[36:40], "data")
	binary.LittleEndian.PutUint32(h[40:44], uint32(data))
	return h
}
