package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// WAV format tags this package names. Any other tag is refused with
// ErrWAVNotPCM, naming the tag.
const (
	WAVFormatPCM        uint16 = 0x0001
	WAVFormatExtensible uint16 = 0xFFFE
)

// DefaultWAVLimit is the byte limit of ReadWAV when the caller passes zero
// or less: 64 MiB, about 35 minutes of 16 kHz mono 16-bit audio.
const DefaultWAVLimit int64 = 64 << 20

// WAV is a decoded PCM WAV file: the source's layout and its audio as mono
// 16-bit samples.
type WAV struct {
	// Rate is the sample rate in Hz, as the file says; the caller decides
	// whether it can use it.
	Rate int
	// Channels is the file's channel count (1 or 2); Samples is mono.
	Channels int
	// BitsPerSample is the file's container size per sample: 8, 16, 24 or 32.
	BitsPerSample int
	// Format is the fmt chunk's tag: WAVFormatPCM or WAVFormatExtensible
	// (with the PCM subformat).
	Format uint16
	// Samples is the audio, one int16 per sample frame: 8-bit unsigned is
	// re-centred and scaled up, 24- and 32-bit keep their top 16 bits, and
	// stereo is the average of the two channels.
	Samples []int16
	// DataBytes is how many bytes of the data chunk became Samples: always
	// len(Samples) whole frames of Channels*BitsPerSample/8 bytes.
	DataBytes int64
	// Truncated reports that the data chunk declared more bytes than the
	// file held, or ended in a partial frame; what was there is in Samples.
	Truncated bool
}

// Duration is the length of the audio.
func (w *WAV) Duration() time.Duration {
	if w.Rate <= 0 {
		return 0
	}
	return time.Duration(len(w.Samples)) * time.Second / time.Duration(w.Rate)
}

// wavFmt is what the reader keeps of the fmt chunk.
type wavFmt struct {
	tag        uint16
	channels   int
	rate       int
	blockAlign int
	bits       int
}

// ReadWAV decodes a PCM WAV file from r. It reads at most limit bytes of
// r (DefaultWAVLimit when limit <= 0); a file that needs more fails with
// ErrWAVTooLarge, so memory stays bounded by the limit whatever the
// headers claim.
//
// It takes RIFF/WAVE with a fmt chunk of format 1 (PCM) or
// WAVE_FORMAT_EXTENSIBLE with the PCM subformat; 8-bit unsigned, 16-, 24-
// and 32-bit signed samples; one or two channels. Chunks it does not know
// (LIST, fact, cue, ...) are skipped, honouring the pad byte of odd-sized
// chunks. Reading stops at the end of the data chunk: chunks after it are
// not read.
//
// The data chunk's size is handled as follows:
//   - 0xFFFFFFFF, the placeholder of a streaming writer: read to the end of
//     the file;
//   - 0 when the data chunk is the last thing the RIFF size covers (or the
//     RIFF size is itself 0 or 0xFFFFFFFF), as a writer leaves it that
//     could not seek back: read to the end of the file; a 0 followed by
//     further chunks within the RIFF size is an empty data chunk;
//   - larger than what the file holds (a file cut off in a copy or a crash):
//     the samples that are there are returned and Truncated is set, so that
//     a caller who needs the whole file can refuse it. A trailing partial
//     frame is dropped and also sets Truncated.
//
// Errors wrap one of the ErrWAV sentinels with the detail; ReadWAV never
// panics on any input.
func ReadWAV(r io.Reader, limit int64) (*WAV, error) {
	if limit <= 0 {
		limit = DefaultWAVLimit
	}
	n := limit
	if n < math.MaxInt64 {
		n++ // one byte more than the limit tells "too large" from "exactly the limit"
	}
	src := &io.LimitedReader{R: r, N: n}
	overLimit := func() bool { return src.N == 0 }

	var hdr [12]byte
	got, err := io.ReadFull(src, hdr[:])
	if got < 4 {
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("media: wav: reading the header: %w", err)
		}
		return nil, fmt.Errorf("%w: %d bytes, no RIFF header", ErrWAVNotRIFF, got)
	}
	switch id := string(hdr[:4]); id {
	case "RIFF":
	case "RIFX", "RF64", "BW64":
		return nil, fmt.Errorf("%w: %q files (big-endian or 64-bit RIFF) are not supported", ErrWAVNotRIFF, id)
	default:
		return nil, fmt.Errorf("%w: starts with %q", ErrWAVNotRIFF, hdr[:4])
	}
	if err != nil {
		return nil, readErr(err, overLimit(), "the RIFF header")
	}
	if form := string(hdr[8:12]); form != "WAVE" {
		return nil, fmt.Errorf("%w: RIFF form %q", ErrWAVNotWAVE, hdr[8:12])
	}
	riffSize := binary.LittleEndian.Uint32(hdr[4:8])

	var f wavFmt
	haveFmt := false
	pos := int64(len(hdr)) // file offset of the next chunk header
	for {
		var ch [8]byte
		if _, err := io.ReadFull(src, ch[:]); err != nil {
			if overLimit() {
				return nil, fmt.Errorf("%w: %d bytes read before the data chunk", ErrWAVTooLarge, limit)
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("media: wav: reading a chunk header: %w", err)
			}
			if !haveFmt {
				return nil, fmt.Errorf("%w: the file ends after %d bytes", ErrWAVNoFmt, pos)
			}
			return nil, fmt.Errorf("%w: the file ends after %d bytes", ErrWAVNoData, pos)
		}
		id := string(ch[:4])
		size := binary.LittleEndian.Uint32(ch[4:])
		pos += int64(len(ch))
		switch {
		case id == "fmt " && !haveFmt:
			if f, err = readFmt(src, size, overLimit); err != nil {
				return nil, err
			}
			haveFmt = true
			pos += int64(size) + int64(size&1)
		case id == "data":
			if !haveFmt {
				return nil, fmt.Errorf("%w: the data chunk at byte %d comes before any fmt chunk", ErrWAVNoFmt, pos-8)
			}
			want := int64(size)
			toEOF := size == math.MaxUint32 ||
				size == 0 && (riffSize == 0 || riffSize == math.MaxUint32 || int64(riffSize)+8 <= pos)
			if toEOF {
				want = -1
			}
			return readData(src, f, want, limit, overLimit)
		default:
			// An unknown chunk or a second fmt chunk: skip it and its pad byte.
			skip := int64(size) + int64(size&1)
			if _, err := io.CopyN(io.Discard, src, skip); err != nil {
				if overLimit() {
					return nil, fmt.Errorf("%w: %d bytes read before the data chunk", ErrWAVTooLarge, limit)
				}
				if !errors.Is(err, io.EOF) {
					return nil, fmt.Errorf("media: wav: skipping chunk %q: %w", ch[:4], err)
				}
				// The file ends inside the chunk; the next header read
				// reports what is missing.
			}
			pos += skip
		}
	}
}

// readErr turns a short read into ErrWAVTooLarge or ErrWAVMalformed and
// keeps other read errors as they are.
func readErr(err error, overLimit bool, what string) error {
	switch {
	case overLimit:
		return fmt.Errorf("%w: the limit ends inside %s", ErrWAVTooLarge, what)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: the file ends inside %s", ErrWAVMalformed, what)
	}
	return fmt.Errorf("media: wav: reading %s: %w", what, err)
}

// extensibleGUIDTail is bytes 4..16 of every KSDATAFORMAT_SUBTYPE GUID
// derived from a WAVE format tag; bytes 0..4 hold the tag.
const extensibleGUIDTail = "\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"

// readFmt reads a fmt chunk of the given size (and its pad byte) and checks
// that its samples are PCM in a layout ReadWAV decodes.
func readFmt(src io.Reader, size uint32, overLimit func() bool) (wavFmt, error) {
	if size < 16 {
		return wavFmt{}, fmt.Errorf("%w: fmt chunk of %d bytes (want at least 16)", ErrWAVMalformed, size)
	}
	var b [40]byte
	keep := min(int64(size), int64(len(b)))
	if _, err := io.ReadFull(src, b[:keep]); err != nil {
		return wavFmt{}, readErr(err, overLimit(), "the fmt chunk")
	}
	if rest := int64(size) - keep + int64(size&1); rest > 0 {
		if _, err := io.CopyN(io.Discard, src, rest); err != nil {
			return wavFmt{}, readErr(err, overLimit(), "the fmt chunk")
		}
	}
	f := wavFmt{
		tag:        binary.LittleEndian.Uint16(b[0:2]),
		channels:   int(binary.LittleEndian.Uint16(b[2:4])),
		rate:       int(binary.LittleEndian.Uint32(b[4:8])),
		blockAlign: int(binary.LittleEndian.Uint16(b[12:14])),
		bits:       int(binary.LittleEndian.Uint16(b[14:16])),
	}
	switch f.tag {
	case WAVFormatPCM:
	case WAVFormatExtensible:
		cbSize := binary.LittleEndian.Uint16(b[16:18])
		if keep < 40 || cbSize < 22 {
			return wavFmt{}, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE fmt chunk of %d bytes, extension of %d (want 40 and 22)", ErrWAVMalformed, size, cbSize)
		}
		if string(b[28:40]) != extensibleGUIDTail {
			return wavFmt{}, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE with a subformat GUID that is no WAVE format (% x)", ErrWAVNotPCM, b[24:40])
		}
		if sub := binary.LittleEndian.Uint32(b[24:28]); sub != uint32(WAVFormatPCM) {
			return wavFmt{}, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE with subformat %d (%s)", ErrWAVNotPCM, sub, wavFormatName(sub))
		}
	default:
		return wavFmt{}, fmt.Errorf("%w: format %d (%s)", ErrWAVNotPCM, f.tag, wavFormatName(uint32(f.tag)))
	}
	switch {
	case f.channels == 0:
		return wavFmt{}, fmt.Errorf("%w: zero channels", ErrWAVMalformed)
	case f.rate == 0:
		return wavFmt{}, fmt.Errorf("%w: sample rate 0", ErrWAVMalformed)
	case f.bits != 8 && f.bits != 16 && f.bits != 24 && f.bits != 32:
		return wavFmt{}, fmt.Errorf("%w: %d bits per sample (want 8, 16, 24 or 32)", ErrWAVUnsupported, f.bits)
	case f.channels > 2:
		return wavFmt{}, fmt.Errorf("%w: %d channels (want 1 or 2)", ErrWAVUnsupported, f.channels)
	case f.blockAlign != f.channels*f.bits/8:
		return wavFmt{}, fmt.Errorf("%w: block align %d for %d channels of %d bits (want %d)", ErrWAVMalformed, f.blockAlign, f.channels, f.bits, f.channels*f.bits/8)
	}
	return f, nil
}

// wavFormatName names the common WAVE format tags for error messages.
func wavFormatName(tag uint32) string {
	switch tag {
	case 0x0001:
		return "PCM"
	case 0x0002:
		return "Microsoft ADPCM"
	case 0x0003:
		return "IEEE float"
	case 0x0006:
		return "A-law"
	case 0x0007:
		return "mu-law"
	case 0x0011:
		return "IMA ADPCM"
	case 0x0031:
		return "GSM 6.10"
	case 0x0055:
		return "MPEG layer 3"
	case 0x0064:
		return "G.721 ADPCM"
	case 0xFFFE:
		return "extensible"
	}
	return "unknown"
}

// readData decodes the data chunk: want bytes, or up to the end of the file
// when want < 0.
func readData(src *io.LimitedReader, f wavFmt, want, limit int64, overLimit func() bool) (*WAV, error) {
	w := &WAV{Rate: f.rate, Channels: f.channels, BitsPerSample: f.bits, Format: f.tag}
	frame := f.blockAlign
	buf := make([]byte, (8192/frame)*frame)
	// Grow from a modest start: the declared size is not trusted for memory.
	capFrames := int64(1 << 14)
	if want >= 0 {
		capFrames = min(want/int64(frame), 1<<16)
	}
	samples := make([]int16, 0, capFrames)
	for want < 0 || w.DataBytes < want {
		n := len(buf)
		if want >= 0 && want-w.DataBytes < int64(n) {
			n = int(want - w.DataBytes)
		}
		got, err := io.ReadFull(src, buf[:n])
		whole := got - got%frame
		samples = appendMono(samples, buf[:whole], f.channels, f.bits)
		w.DataBytes += int64(whole)
		if got != whole {
			// A partial frame: at the end of the file, or a declared size
			// that is not a whole number of frames.
			w.Truncated = true
		}
		if err != nil {
			if overLimit() {
				return nil, fmt.Errorf("%w: %d bytes", ErrWAVTooLarge, limit)
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("media: wav: reading the data chunk: %w", err)
			}
			if want >= 0 {
				w.Truncated = true
			}
			break
		}
		if got != whole {
			break
		}
	}
	if overLimit() {
		return nil, fmt.Errorf("%w: %d bytes", ErrWAVTooLarge, limit)
	}
	w.Samples = samples
	return w, nil
}

// appendMono decodes whole frames of little-endian PCM and appends one mono
// sample per frame.
func appendMono(dst []int16, b []byte, channels, bits int) []int16 {
	bps := bits / 8
	frame := channels * bps
	for off := 0; off+frame <= len(b); off += frame {
		var sum int32
		for c := range channels {
			p := b[off+c*bps:]
			switch bps {
			case 1:
				sum += (int32(p[0]) - 128) << 8
			case 2:
				sum += int32(int16(binary.LittleEndian.Uint16(p)))
			case 3:
				sum += int32(int16(uint16(p[1]) | uint16(p[2])<<8))
			case 4:
				sum += int32(int16(uint16(p[2]) | uint16(p[3])<<8))
			}
		}
		dst = append(dst, int16(sum/int32(channels)))
	}
	return dst
}

// WriteWAV writes samples as a 16-bit mono PCM WAV file at rate Hz: a
// 44-byte header and the data chunk. A rate that is not positive or the
// samples of a file over 4 GiB fail with ErrInvalidConfig.
func WriteWAV(w io.Writer, rate int, samples []int16) error {
	if rate <= 0 || rate > math.MaxUint32/2 {
		return fmt.Errorf("%w: wav sample rate %d", ErrInvalidConfig, rate)
	}
	dataBytes := int64(len(samples)) * 2
	if dataBytes > math.MaxUint32-36 {
		return fmt.Errorf("%w: %d samples do not fit a WAV file", ErrInvalidConfig, len(samples))
	}
	var h [44]byte
	copy(h[0:4], "RIFF")
	binary.LittleEndian.PutUint32(h[4:8], uint32(36+dataBytes))
	copy(h[8:16], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:20], 16)
	binary.LittleEndian.PutUint16(h[20:22], WAVFormatPCM)
	binary.LittleEndian.PutUint16(h[22:24], 1)
	binary.LittleEndian.PutUint32(h[24:28], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:32], uint32(rate*2))
	binary.LittleEndian.PutUint16(h[32:34], 2)
	binary.LittleEndian.PutUint16(h[34:36], 16)
	copy(h[36:40], "data")
	binary.LittleEndian.PutUint32(h[40:44], uint32(dataBytes))
	if _, err := w.Write(h[:]); err != nil {
		return fmt.Errorf("media: wav: writing the header: %w", err)
	}
	buf := make([]byte, 0, 8192)
	for len(samples) > 0 {
		n := min(len(samples), cap(buf)/2)
		buf = buf[:0]
		for _, s := range samples[:n] {
			buf = binary.LittleEndian.AppendUint16(buf, uint16(s))
		}
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("media: wav: writing samples: %w", err)
		}
		samples = samples[n:]
	}
	return nil
}
