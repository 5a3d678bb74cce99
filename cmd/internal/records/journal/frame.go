package journal

import (
	"encoding/binary"
	"hash/crc32"
)

// The frame, little-endian:
//
//	offset 0  uint32  payload length
//	offset 4  uint32  CRC32C (Castagnoli) of bytes 0-3 and 8 to the end
//	offset 8  byte    kind
//	offset 9  uint64  seq
//	offset 17 payload
//
// The CRC covers the length, so a flipped length is caught rather than
// followed into the middle of the next frame.
const (
	headerSize = 17
	// MaxPayload is the largest payload Append takes (ErrTooLarge past it).
	MaxPayload = 16 << 20
	// FirstReservedKind and the kinds above it are the journal's own
	// (Append refuses them, and kind 0).
	FirstReservedKind byte = 0xF0
	// kindAck is an ack frame in a segment's .ack side file: its seq is
	// the acked entry's, its payload empty.
	kindAck byte = 0xFF
	// seqWindow bounds how far ahead of the previous frame's seq a frame
	// may be. Seqs run on by one; the bound lets a resynchronising scan
	// throw out almost every false header (random bytes pass it with odds
	// of 2^-32) before it computes a CRC.
	seqWindow = 1 << 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends the frame of (seq, kind, payload) to dst.
func appendFrame(dst []byte, seq uint64, kind byte, payload []byte) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	dst = append(dst, 0, 0, 0, 0, kind)
	dst = binary.LittleEndian.AppendUint64(dst, seq)
	dst = append(dst, payload...)
	binary.LittleEndian.PutUint32(dst[start+4:], frameCRC(dst[start:]))
	return dst
}

// frameCRC is the CRC of a whole frame (header and payload).
func frameCRC(frame []byte) uint32 {
	c := crc32.Update(0, castagnoli, frame[0:4])
	return crc32.Update(c, castagnoli, frame[8:])
}

// frame is one valid frame found by a scan.
type frame struct {
	off  int64
	seq  uint64
	kind byte
	n    uint32 // payload length
}

func (f frame) size() int64 { return headerSize + int64(f.n) }

// rules say what a valid frame of one file looks like.
type rules struct {
	// acks: an .ack side file (kind kindAck, empty payloads, seqs in any
	// order from the segment's first); otherwise a segment (kinds 1 to
	// FirstReservedKind-1, seqs rising).
	acks bool
}

// decodeAt reads the frame at off, if there is a valid one: whole, its
// CRC right, its kind and length allowed, its seq at least minSeq (and,
// in a segment, less than seqWindow past it).
func decodeAt(data []byte, off int, minSeq uint64, r rules) (frame, bool) {
	if off < 0 || len(data)-off < headerSize {
		return frame{}, false
	}
	h := data[off : off+headerSize]
	n := binary.LittleEndian.Uint32(h[0:4])
	kind := h[8]
	seq := binary.LittleEndian.Uint64(h[9:17])
	if r.acks {
		if kind != kindAck || n != 0 || seq < minSeq {
			return frame{}, false
		}
	} else {
		if kind == 0 || kind >= FirstReservedKind || n > MaxPayload {
			return frame{}, false
		}
		if seq < minSeq || seq-minSeq >= seqWindow {
			return frame{}, false
		}
	}
	if uint64(len(data)-off-headerSize) < uint64(n) {
		return frame{}, false
	}
	whole := data[off : off+headerSize+int(n)]
	if binary.LittleEndian.Uint32(h[4:8]) != frameCRC(whole) {
		return frame{}, false
	}
	return frame{off: int64(off), seq: seq, kind: kind, n: n}, true
}

// scanResult is what scan found in one file.
type scanResult struct {
	frames []frame
	// end is the offset after the last valid frame.
	end int64
	// tail: bytes after end that hold no valid frame (a torn last frame
	// in the file being written; corruption in a sealed one).
	tail bool
	// corrupt counts the runs of bad bytes skipped between valid frames.
	corrupt int
}

// scan reads every valid frame of data, a segment whose first seq is
// first (or its .ack file). A run of bad bytes followed by a valid frame
// is skipped and counted; bad bytes with no valid frame after them are
// the tail.
func scan(data []byte, first uint64, r rules) scanResult {
	var res scanResult
	minSeq := first
	off := 0
	for off < len(data) {
		if f, ok := decodeAt(data, off, minSeq, r); ok {
			res.frames = append(res.frames, f)
			off += int(f.size())
			res.end = int64(off)
			if !r.acks {
				minSeq = f.seq + 1
			}
			continue
		}
		next := resync(data, off+1, minSeq, r)
		if next < 0 {
			res.tail = true
			break
		}
		res.corrupt++
		off = next
	}
	return res
}

// resync finds the first offset from off that holds a valid frame, or -1.
func resync(data []byte, off int, minSeq uint64, r rules) int {
	for p := off; len(data)-p >= headerSize; p++ {
		if _, ok := decodeAt(data, p, minSeq, r); ok {
			return p
		}
	}
	return -1
}
