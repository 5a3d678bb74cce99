package media

import (
	"encoding/binary"
	"fmt"
)

// RTPHeaderLen is the length of the fixed RTP header (RFC 3550 section 5.1),
// before the CSRC list and the header extension.
const RTPHeaderLen = 12

// Payload types of the static audio/video profile (RFC 3551) that the SIP
// input accepts: G.711 mu-law and A-law, 8 kHz.
const (
	PayloadTypePCMU uint8 = 0
	PayloadTypePCMA uint8 = 8
)

// RTPPacket is a parsed view of one RTP packet. Its slices point into the
// buffer given to ParseRTP (nothing is copied), so it is valid only as long
// as that buffer is not reused.
type RTPPacket struct {
	// Marker is the M bit; for audio it marks the first packet of a
	// talkspurt.
	Marker bool
	// PayloadType is the 7-bit payload type.
	PayloadType uint8
	// SequenceNumber increments by one per packet and wraps at 65535.
	SequenceNumber uint16
	// Timestamp is the sampling instant of the first sample in units of the
	// payload's clock rate; it wraps at 2^32.
	Timestamp uint32
	// SSRC identifies the source.
	SSRC uint32
	// CSRCCount is the number of contributing sources (CC field).
	CSRCCount int
	// Extension tells whether the X bit was set; ExtensionProfile and
	// ExtensionPayload (the data words, without their 4-byte header) are set
	// only then.
	Extension        bool
	ExtensionProfile uint16
	ExtensionPayload []byte
	// PaddingLen is how many bytes of padding (P bit) were stripped, 0 when
	// the P bit is clear.
	PaddingLen int
	// Payload is the payload without header, CSRCs, extension and padding.
	Payload []byte

	csrc []byte
}

// CSRC returns the i-th contributing source, or 0 when i is out of range.
func (p *RTPPacket) CSRC(i int) uint32 {
	if i < 0 || i >= p.CSRCCount || 4*i+4 > len(p.csrc) {
		return 0
	}
	return binary.BigEndian.Uint32(p.csrc[4*i:])
}

// ParseRTP parses buf as an RTP packet (RFC 3550 section 5.1) into p without
// allocating: the version must be 2, the CSRC list and the header extension
// are bounds-checked and skipped, padding is stripped using its last byte.
// On error p is zeroed and the error wraps ErrRTPVersion, ErrRTPShort,
// ErrRTPExtension or ErrRTPPadding. It never panics.
func ParseRTP(buf []byte, p *RTPPacket) error {
	*p = RTPPacket{}
	if len(buf) == 0 {
		return fmt.Errorf("%w: empty datagram", ErrRTPShort)
	}
	// The version first: a datagram that is not RTP (STUN, DTLS) should
	// say so, however short it is.
	if v := buf[0] >> 6; v != 2 {
		return fmt.Errorf("%w: version %d", ErrRTPVersion, v)
	}
	if len(buf) < RTPHeaderLen {
		return fmt.Errorf("%w: %d bytes, the fixed header needs %d", ErrRTPShort, len(buf), RTPHeaderLen)
	}
	cc := int(buf[0] & 0x0f)
	off := RTPHeaderLen + 4*cc
	if off > len(buf) {
		return fmt.Errorf("%w: %d CSRCs need %d bytes, have %d", ErrRTPShort, cc, off, len(buf))
	}
	var q RTPPacket
	q.Marker = buf[1]&0x80 != 0
	q.PayloadType = buf[1] & 0x7f
	q.SequenceNumber = binary.BigEndian.Uint16(buf[2:])
	q.Timestamp = binary.BigEndian.Uint32(buf[4:])
	q.SSRC = binary.BigEndian.Uint32(buf[8:])
	q.CSRCCount = cc
	q.csrc = buf[RTPHeaderLen:off:off]
	if buf[0]&0x10 != 0 {
		if len(buf)-off < 4 {
			return fmt.Errorf("%w: extension header at byte %d, packet has %d", ErrRTPExtension, off, len(buf))
		}
		q.Extension = true
		q.ExtensionProfile = binary.BigEndian.Uint16(buf[off:])
		n := 4 * int(binary.BigEndian.Uint16(buf[off+2:]))
		off += 4
		if n > len(buf)-off {
			return fmt.Errorf("%w: %d bytes of extension at byte %d, packet has %d", ErrRTPExtension, n, off, len(buf))
		}
		q.ExtensionPayload = buf[off : off+n : off+n]
		off += n
	}
	end := len(buf)
	if buf[0]&0x20 != 0 {
		// The count includes itself, so it is at least 1, and it pads the
		// payload only, never the header.
		pad := 0
		if end > off {
			pad = int(buf[end-1])
		}
		if pad == 0 || pad > end-off {
			return fmt.Errorf("%w: %d bytes of padding in a %d-byte payload", ErrRTPPadding, pad, end-off)
		}
		end -= pad
		q.PaddingLen = pad
	}
	q.Payload = buf[off:end:end]
	*p = q
	return nil
}
