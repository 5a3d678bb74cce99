package opus

import "fmt"

// mode is the coding mode a packet's TOC byte announces (RFC 6716 3.1).
type mode uint8

const (
	modeUnknown mode = iota // no packet seen yet
	modeSILK
	modeHybrid
	modeCELT
)

// maxFrameBytes is the largest frame RFC 6716 allows (R2).
const maxFrameBytes = 1275

// packet is what the decoder needs to know of a packet before libopus
// decodes it: the size of its audio, whether it can carry FEC, and whether
// it is a DTX packet (frames without bytes, which libopus conceals).
type packet struct {
	mode   mode
	stereo bool
	// frameSamples48 is the duration of one frame in samples at 48 kHz.
	frameSamples48 int
	frames         int
	// first is the first frame, the one whose LBRR data FEC decodes.
	first []byte
	// payload is the number of bytes of all frames together.
	payload int
}

// samples is the packet's duration in samples at rate.
func (p packet) samples(rate int) int {
	return p.frames * p.frameSamples48 * rate / 48000
}

// parsePacket reads the TOC byte and the frame packing of an Opus packet
// (RFC 6716 3.1 and 3.2) with the checks of libopus's opus_packet_parse, so
// that it refuses no packet libopus accepts. It never looks at the coded
// audio.
func parsePacket(data []byte) (packet, error) {
	if len(data) == 0 {
		return packet{}, fmt.Errorf("%w: empty packet", ErrCorruptPacket)
	}
	toc := data[0]
	p := packet{stereo: toc&0x04 != 0}
	switch {
	case toc&0x80 != 0:
		p.mode = modeCELT
		p.frameSamples48 = 120 << ((toc >> 3) & 3) // 2.5, 5, 10, 20 ms
	case toc&0x60 == 0x60:
		p.mode = modeHybrid
		p.frameSamples48 = 480 // 10 ms
		if toc&0x08 != 0 {
			p.frameSamples48 = 960
		}
	default:
		p.mode = modeSILK
		if n := (toc >> 3) & 3; n == 3 {
			p.frameSamples48 = 2880 // 60 ms
		} else {
			p.frameSamples48 = 480 << n // 10, 20, 40 ms
		}
	}
	rest := data[1:]
	firstLen, lastLen := 0, 0
	switch toc & 3 {
	case 0:
		p.frames = 1
		firstLen, lastLen = len(rest), len(rest)
	case 1:
		p.frames = 2
		if len(rest)%2 != 0 {
			return packet{}, fmt.Errorf("%w: code 1 packet with odd payload %d", ErrCorruptPacket, len(rest))
		}
		firstLen, lastLen = len(rest)/2, len(rest)/2
	case 2:
		p.frames = 2
		size, n := frameSize(rest)
		if n < 0 || size > len(rest)-n {
			return packet{}, fmt.Errorf("%w: code 2 packet with bad frame length", ErrCorruptPacket)
		}
		rest = rest[n:]
		firstLen, lastLen = size, len(rest)-size
	case 3:
		if len(rest) < 1 {
			return packet{}, fmt.Errorf("%w: code 3 packet without frame count", ErrCorruptPacket)
		}
		ch := rest[0]
		rest = rest[1:]
		p.frames = int(ch & 0x3f)
		if p.frames == 0 || p.frames*p.frameSamples48 > 5760 {
			return packet{}, fmt.Errorf("%w: code 3 packet with %d frames", ErrCorruptPacket, p.frames)
		}
		if ch&0x40 != 0 { // padding: its length bytes here, the padding at the end
			for {
				if len(rest) == 0 {
					return packet{}, fmt.Errorf("%w: code 3 packet with truncated padding", ErrCorruptPacket)
				}
				b := int(rest[0])
				rest = rest[1:]
				pad := b
				if b == 255 {
					pad = 254
				}
				if pad > len(rest) {
					return packet{}, fmt.Errorf("%w: code 3 packet with padding past its end", ErrCorruptPacket)
				}
				rest = rest[:len(rest)-pad]
				if b != 255 {
					break
				}
			}
		}
		if ch&0x80 != 0 { // VBR: a length for every frame but the last
			lengths, sizes := 0, 0
			for i := 0; i < p.frames-1; i++ {
				size, n := frameSize(rest[lengths:])
				if n < 0 || size > len(rest)-lengths-n-sizes {
					return packet{}, fmt.Errorf("%w: code 3 packet with bad frame length", ErrCorruptPacket)
				}
				if i == 0 {
					firstLen = size
				}
				lengths += n
				sizes += size
			}
			rest = rest[lengths:]
			lastLen = len(rest) - sizes
			if p.frames == 1 {
				firstLen = lastLen
			}
		} else { // CBR: equal frames
			if len(rest)%p.frames != 0 {
				return packet{}, fmt.Errorf("%w: code 3 cbr packet of %d bytes for %d frames", ErrCorruptPacket, len(rest), p.frames)
			}
			firstLen, lastLen = len(rest)/p.frames, len(rest)/p.frames
		}
	}
	if lastLen > maxFrameBytes {
		return packet{}, fmt.Errorf("%w: frame of %d bytes, longer than %d", ErrCorruptPacket, lastLen, maxFrameBytes)
	}
	p.first = rest[:firstLen]
	p.payload = len(rest)
	return p, nil
}

// frameSize reads a frame length of one or two bytes (RFC 6716 3.2.1) and
// returns it with the number of bytes read, or n < 0 when b is too short.
func frameSize(b []byte) (size, n int) {
	switch {
	case len(b) < 1:
		return 0, -1
	case b[0] < 252:
		return int(b[0]), 1
	case len(b) < 2:
		return 0, -1
	}
	return 4*int(b[1]) + int(b[0]), 2
}

// hasLBRR reports whether the packet's first frame carries LBRR (FEC) data
// for the frame before it, as libopus's opus_packet_has_lbrr (1.5) reads it:
// the SILK header starts the range coder with equiprobable bits, one VAD
// flag per 20 ms SILK frame and then the LBRR flag, per channel, and such
// bits are the leading bits of the first byte. CELT-only packets carry none.
func (p packet) hasLBRR() bool {
	if p.mode == modeCELT || len(p.first) == 0 {
		return false
	}
	silkFrames := 1
	if p.frameSamples48 > 960 {
		silkFrames = p.frameSamples48 / 960
	}
	b := p.first[0]
	lbrr := b>>(7-silkFrames)&1 != 0
	if p.stereo {
		lbrr = lbrr || b>>(6-2*silkFrames)&1 != 0
	}
	return lbrr
}

// HasFEC reports whether an Opus packet carries in-band FEC data for the
// packet before it, so that a jitter buffer can tell whether waiting for it
// helps a lost packet. A malformed packet has none.
func HasFEC(data []byte) bool {
	p, err := parsePacket(data)
	return err == nil && p.hasLBRR()
}
