package recording

import (
	"encoding/binary"
	"hash/fnv"
	"os"
)

// Ogg pages (RFC 3533) carrying Opus (RFC 7845): an OpusHead page, an
// OpusTags page, then pages of 20 ms packets, 50 to a page (1 s), the last
// page marked end of stream. Granule positions count 48 kHz samples from
// the start, the pre-skip included.

const (
	oggBOS = 0x02
	oggEOS = 0x04
	// oggPreSkip is libopus's lookahead at 48 kHz (2.5 ms + 4 ms of delay
	// compensation) for the VoIP application: the decoder drops it.
	oggPreSkip = 312
	// oggPacketsPerPage: a page a second.
	oggPacketsPerPage = 50
	// oggGranulePerPacket is 20 ms at 48 kHz.
	oggGranulePerPacket = 960
)

// oggCRC is the Ogg checksum: CRC-32, polynomial 0x04c11db7, not
// reflected, initial value 0.
var oggCRC = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func oggChecksum(p []byte) uint32 {
	var c uint32
	for _, b := range p {
		c = c<<8 ^ oggCRC[byte(c>>24)^b]
	}
	return c
}

// oggStream lays packets out in pages.
type oggStream struct {
	serial  uint32
	seq     uint32
	granule int64
	lacing  []byte // the pending page's segment table
	body    []byte // the pending page's packets
	packets int
	page    []byte // the last page made
}

func newOggStream(callID string) *oggStream {
	h := fnv.New32a()
	h.Write([]byte(callID))
	return &oggStream{serial: h.Sum32(), lacing: make([]byte, 0, 255), body: make([]byte, 0, 8192), page: make([]byte, 0, 8192+282)}
}

// fits says whether a packet of n bytes fits the pending page's table.
func (s *oggStream) fits(n int) bool { return len(s.lacing)+n/255+1 <= 255 }

// add puts a packet in the pending page.
func (s *oggStream) add(p []byte, granule int) {
	n := len(p)
	for ; n >= 255; n -= 255 {
		s.lacing = append(s.lacing, 255)
	}
	s.lacing = append(s.lacing, byte(n))
	s.body = append(s.body, p...)
	s.packets++
	s.granule += int64(granule)
}

// flush makes the pending page (with flags) and returns it; the bytes are
// valid until the next flush.
func (s *oggStream) flush(flags byte) []byte {
	pg := s.page[:0]
	pg = append(pg, "OggS"...)
	pg = append(pg, 0, flags)
	pg = binary.LittleEndian.AppendUint64(pg, uint64(s.granule))
	pg = binary.LittleEndian.AppendUint32(pg, s.serial)
	pg = binary.LittleEndian.AppendUint32(pg, s.seq)
	pg = append(pg, 0, 0, 0, 0, byte(len(s.lacing)))
	pg = append(pg, s.lacing...)
	pg = append(pg, s.body...)
	binary.LittleEndian.PutUint32(pg[22:26], oggChecksum(pg))
	s.page = pg
	s.seq++
	s.lacing, s.body, s.packets = s.lacing[:0], s.body[:0], 0
	return pg
}

// oggOpus is the container of stereo Opus in Ogg.
type oggOpus struct {
	rate   int
	enc    opusEncoder
	s      *oggStream
	pcm    []int16 // one slot, interleaved
	packet []byte
	// pending is how many slots the pending page holds.
	pending int
}

// opusEncoder is the stereo libopus encoder (ogg_cgo.go).
type opusEncoder interface {
	Encode(pcm []int16, out []byte) (int, error)
}

func newOggOpus(callID string, rate int, enc opusEncoder) *oggOpus {
	return &oggOpus{rate: rate, enc: enc, s: newOggStream(callID), pcm: make([]int16, 2*(rate/50)), packet: make([]byte, 1500)}
}

func (o *oggOpus) begin() []byte {
	head := make([]byte, 0, 19)
	head = append(head, "OpusHead"...)
	head = append(head, 1, 2) // version, channels
	head = binary.LittleEndian.AppendUint16(head, oggPreSkip)
	head = binary.LittleEndian.AppendUint32(head, uint32(o.rate))
	head = append(head, 0, 0, 0) // gain, mapping family 0
	o.s.add(head, 0)
	out := append([]byte(nil), o.s.flush(oggBOS)...)
	const vendor = "brisvox"
	tags := append([]byte("OpusTags"), byte(len(vendor)), 0, 0, 0)
	tags = append(tags, vendor...)
	tags = append(tags, 0, 0, 0, 0) // no comments
	o.s.add(tags, 0)
	out = append(out, o.s.flush(0)...)
	o.s.granule = oggPreSkip
	return out
}

func (o *oggOpus) slot(l, r []int16) ([]byte, int, error) {
	for j := range l {
		o.pcm[2*j], o.pcm[2*j+1] = l[j], r[j]
	}
	n, err := o.enc.Encode(o.pcm, o.packet)
	if err != nil {
		return nil, 0, err
	}
	var page []byte
	slots := 0
	// The last packet stays pending, so the end of stream is a page of
	// packets: a full page goes out when the next packet comes.
	if o.s.packets == oggPacketsPerPage || (o.s.packets > 0 && !o.s.fits(n)) {
		page, slots = o.s.flush(0), o.pending
		o.pending = 0
	}
	o.s.add(o.packet[:n], oggGranulePerPacket)
	o.pending++
	return page, slots, nil
}

func (o *oggOpus) end() ([]byte, int) {
	if o.s.packets == 0 {
		return nil, 0
	}
	n := o.pending
	o.pending = 0
	return o.s.flush(oggEOS), n
}

// finish keeps what the disk took: pages are whole or a reader resyncs
// past the torn one.
func (o *oggOpus) finish(f *os.File, written, slots int64) (int64, float64, bool, error) {
	if written == 0 {
		return 0, 0, false, nil
	}
	return written, float64(slots) * 20, true, f.Truncate(written)
}
