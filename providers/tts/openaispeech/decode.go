package openaispeech

import (
	"encoding/binary"
	"fmt"

	"github.com/brisvox/brisvox/providers"
)

// Bounds of the WAV header reader.
const (
	// maxWAVHeader bounds the header bytes before the data chunk (RIFF,
	// fmt and any chunks skipped): a server that never starts the data is
	// a Protocol error, not an endless skip.
	maxWAVHeader = 4 << 10
	// maxFmt is the longest fmt chunk read (WAVE_FORMAT_EXTENSIBLE).
	maxFmt = 40
	// minWAVRate and maxWAVRate bound the rate a header may give.
	minWAVRate, maxWAVRate = 4000, 96000
)

// WAV format tags.
const (
	tagPCM        = 1
	tagExtensible = 0xFFFE
)

// States of the decoder.
const (
	stRIFF  = iota // the 12 bytes "RIFF" size "WAVE"
	stChunk        // a chunk header: id, size
	stFmt          // the fmt chunk's body
	stSkip         // a chunk skipped (and pad bytes)
	stData         // samples
)

// decoder turns a response body, given in pieces of any size (a WAV
// header split byte by byte, a sample split between two reads), into
// PCM16 samples. Its state is fixed-size: a body costs no allocation
// beyond the samples handed out. The zero decoder is not ready; reset it.
type decoder struct {
	wav   bool
	rate  int
	state int
	// hdr holds a header field being read: need bytes wanted, n had.
	hdr  [maxFmt]byte
	need int
	n    int
	// skip is what is left of a chunk skipped; seen counts the header
	// bytes so far (bounded by maxWAVHeader).
	skip   int64
	seen   int
	fmtLen int
	// odd holds the first byte of a sample split between two pieces.
	odd    byte
	hasOdd bool
}

// reset readies d for a new body: raw PCM at rate, or WAV.
func (d *decoder) reset(wav bool, rate int) {
	*d = decoder{wav: wav, rate: rate, state: stData}
	if wav {
		d.state, d.need, d.rate = stRIFF, 12, 0
	}
}

// Rate is the body's sample rate: the configured one for raw PCM, the
// header's for WAV (0 before the header is read).
func (d *decoder) Rate() int { return d.rate }

// decode reads the next piece of the body and returns its samples (nil
// when it held none): a new slice, owned by the caller. A header that
// is not PCM16 mono WAV is a Protocol error.
func (d *decoder) decode(b []byte) ([]int16, error) {
	for d.state != stData && len(b) > 0 {
		var err error
		if b, err = d.header(b); err != nil {
			return nil, err
		}
	}
	if len(b) == 0 {
		return nil, nil
	}
	total := len(b)
	if d.hasOdd {
		total++
	}
	out := make([]int16, total/2)
	i := 0
	if d.hasOdd {
		out[0] = int16(uint16(d.odd) | uint16(b[0])<<8)
		b = b[1:]
		i = 1
		d.hasOdd = false
	}
	for ; len(b) >= 2; i++ {
		out[i] = int16(binary.LittleEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		d.odd, d.hasOdd = b[0], true
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// end checks the body's end: the header read whole, no half sample.
func (d *decoder) end() error {
	if d.state != stData {
		return &providers.Protocol{Detail: "the body ended inside the WAV header"}
	}
	if d.hasOdd {
		return &providers.Protocol{Detail: "the body ended inside a sample (an odd byte count)"}
	}
	return nil
}

// header consumes header bytes of b and returns the rest.
func (d *decoder) header(b []byte) ([]byte, error) {
	if d.state == stSkip {
		k := min(int64(len(b)), d.skip)
		d.skip -= k
		if err := d.count(int(k)); err != nil {
			return nil, err
		}
		if d.skip == 0 {
			d.state, d.need, d.n = stChunk, 8, 0
		}
		return b[k:], nil
	}
	k := copy(d.hdr[d.n:d.need], b)
	d.n += k
	if err := d.count(k); err != nil {
		return nil, err
	}
	b = b[k:]
	if d.n < d.need {
		return b, nil
	}
	h := d.hdr[:d.need]
	switch d.state {
	case stRIFF:
		if string(h[0:4]) != "RIFF" || string(h[8:12]) != "WAVE" {
			return nil, &providers.Protocol{Detail: "the body is not a RIFF/WAVE stream"}
		}
		d.state, d.need, d.n = stChunk, 8, 0
	case stChunk:
		size := int64(binary.LittleEndian.Uint32(h[4:8]))
		switch string(h[0:4]) {
		case "fmt ":
			if size < 16 || size > maxFmt {
				return nil, &providers.Protocol{Detail: fmt.Sprintf("a WAV fmt chunk of %d bytes", size)}
			}
			d.state, d.need, d.n, d.fmtLen = stFmt, int(size), 0, int(size)
		case "data":
			if d.rate == 0 {
				return nil, &providers.Protocol{Detail: "WAV data before its fmt chunk"}
			}
			// The size is ignored: a streaming server cannot know it (it
			// writes 0 or 0xFFFFFFFF); the body's end ends the data.
			d.state = stData
		default:
			d.state, d.skip = stSkip, size+size&1
			if d.skip == 0 {
				d.state, d.need, d.n = stChunk, 8, 0
			}
		}
	case stFmt:
		if err := d.format(h); err != nil {
			return nil, err
		}
		d.state, d.skip = stSkip, int64(d.fmtLen&1)
		if d.skip == 0 {
			d.state, d.need, d.n = stChunk, 8, 0
		}
	}
	return b, nil
}

// format checks the fmt chunk: PCM (or extensible PCM), mono, 16 bits.
func (d *decoder) format(h []byte) error {
	tag := binary.LittleEndian.Uint16(h[0:2])
	channels := binary.LittleEndian.Uint16(h[2:4])
	rate := binary.LittleEndian.Uint32(h[4:8])
	block := binary.LittleEndian.Uint16(h[12:14])
	bits := binary.LittleEndian.Uint16(h[14:16])
	if tag == tagExtensible && len(h) >= 26 {
		tag = binary.LittleEndian.Uint16(h[24:26]) // the sub-format GUID's first two bytes
	}
	if tag != tagPCM || channels != 1 || bits != 16 || block != 2 {
		return &providers.Protocol{Detail: fmt.Sprintf("the WAV is format %d, %d channels, %d bits: not PCM16 mono", tag, channels, bits)}
	}
	if rate < minWAVRate || rate > maxWAVRate {
		return &providers.Protocol{Detail: fmt.Sprintf("a WAV rate of %d Hz", rate)}
	}
	d.rate = int(rate)
	return nil
}

// count adds n header bytes to the bound.
func (d *decoder) count(n int) error {
	d.seen += n
	if d.seen > maxWAVHeader {
		return &providers.Protocol{Detail: fmt.Sprintf("no WAV data within %d header bytes", maxWAVHeader)}
	}
	return nil
}
