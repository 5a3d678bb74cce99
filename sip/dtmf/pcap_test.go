package dtmf_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
)

// sippDir holds sip-tester's recordings (Debian's sip-tester package).
const sippDir = "/usr/share/sip-tester"

// sippPresses are sipp's dtmf_2833_*.pcap files in the order 0-9 * #.
var sippPresses = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "star", "pound"}

// rtpPacket is what the test takes of a recorded RTP packet.
type rtpPacket struct {
	at      time.Time
	seq     uint16
	ts      uint32
	marker  bool
	pt      uint8
	payload []byte
}

// readPcap reads a classic pcap file (microsecond, either byte order) of
// Ethernet/IPv4/UDP/RTP packets: a tiny reader, enough for sipp's
// recordings. Anything else in it is an error.
func readPcap(path string) ([]rtpPacket, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(raw) < 24 {
		return nil, errors.New("short global header")
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(raw) {
	case 0xa1b2c3d4:
		bo = binary.LittleEndian
	case 0xd4c3b2a1:
		bo = binary.BigEndian
	default:
		return nil, errors.New("not a microsecond pcap")
	}
	if link := bo.Uint32(raw[20:]); link != 1 {
		return nil, fmt.Errorf("link type %d, want Ethernet", link)
	}
	var out []rtpPacket
	for off := 24; off < len(raw); {
		if off+16 > len(raw) {
			return nil, errors.New("short record header")
		}
		sec, usec, incl := bo.Uint32(raw[off:]), bo.Uint32(raw[off+4:]), int(bo.Uint32(raw[off+8:]))
		off += 16
		if off+incl > len(raw) {
			return nil, errors.New("short record")
		}
		frame := raw[off : off+incl]
		off += incl
		if len(frame) < 14 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
			return nil, errors.New("not IPv4 over Ethernet")
		}
		ip := frame[14:]
		if len(ip) < 20 || ip[0]>>4 != 4 || ip[9] != 17 {
			return nil, errors.New("not IPv4 UDP")
		}
		udp := ip[int(ip[0]&15)*4:]
		if len(udp) < 8+12 {
			return nil, errors.New("short UDP or RTP")
		}
		ulen := int(binary.BigEndian.Uint16(udp[4:]))
		if ulen < 8+12 || ulen > len(udp) {
			return nil, errors.New("bad UDP length")
		}
		rtp := udp[8:ulen]
		if rtp[0]>>6 != 2 || rtp[0]&0x3f != 0 {
			return nil, errors.New("RTP with padding, extension or CSRCs: not what sipp records")
		}
		out = append(out, rtpPacket{
			at:      time.Unix(int64(sec), int64(usec)*1000),
			seq:     binary.BigEndian.Uint16(rtp[2:]),
			ts:      binary.BigEndian.Uint32(rtp[4:]),
			marker:  rtp[1]&0x80 != 0,
			pt:      rtp[1] & 0x7f,
			payload: rtp[12:],
		})
	}
	return out, nil
}

// sippRecordings reads the 12 files, or skips the test when sip-tester is
// not installed.
func sippRecordings(t *testing.T) [][]rtpPacket {
	t.Helper()
	var files [][]rtpPacket
	for _, name := range sippPresses {
		path := filepath.Join(sippDir, "dtmf_2833_"+name+".pcap")
		pkts, err := readPcap(path)
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("%s missing: install sip-tester (Debian) for sipp's DTMF recordings", path)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files = append(files, pkts)
	}
	return files
}

// TestSippRecordings replays sipp's 12 dtmf_2833 recordings in order, as
// sipp sends them (sequence numbers and timestamps as recorded: they jump
// between files, backwards from 0 to 1), one file a second, and wants
// exactly the 12 keys in order, each 280 ms (2240 units at 8 kHz), each
// first packet of duration 0 included. Played twice each, after a pause,
// it wants 24 (a scenario pressing a key twice).
// Mutations caught: dropping a zero-duration start (At moves), a
// timestamp or sequence comparison that calls the jump from 0 to 1
// reordering (the '1' is lost), counting the three end packets (36), a
// restart rule missing (12 of 24).
func TestSippRecordings(t *testing.T) {
	files := sippRecordings(t)
	for _, plays := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d plays", plays), func(t *testing.T) {
			d, err := dtmf.New(dtmf.Config{})
			if err != nil {
				t.Fatal(err)
			}
			var got []messages.DTMF
			var firsts []time.Time
			var buf [2]messages.DTMF
			slot := 0
			for _, pkts := range files {
				for range plays {
					// Each play starts at its own second; offsets as recorded.
					base := t0.Add(time.Duration(slot) * time.Second)
					slot++
					firsts = append(firsts, base)
					for _, p := range pkts {
						if p.pt != 101 {
							t.Fatalf("payload type %d, want 101 (telephone-event)", p.pt)
						}
						out, err := d.Packet(buf[:0], p.seq, p.ts, p.marker, p.payload, base.Add(p.at.Sub(pkts[0].at)))
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, out...)
					}
				}
			}
			if p, ok := d.Expire(t0.Add(time.Hour)); ok {
				got = append(got, p)
			}
			var keys []byte
			for _, p := range got {
				keys = append(keys, p.Digit)
			}
			want := ""
			for _, k := range "0123456789*#" {
				for range plays {
					want += string(k)
				}
			}
			if string(keys) != want {
				t.Fatalf("keys %q, want %q", keys, want)
			}
			for i, p := range got {
				if p.Duration != 280*time.Millisecond || !p.At.Equal(firsts[i]) {
					t.Errorf("press %d %q: %v at +%v, want 280ms at +%v", i, p.Digit, p.Duration, p.At.Sub(t0), firsts[i].Sub(t0))
				}
			}
			s := d.Stats()
			if s.Presses != uint64(len(want)) || s.Packets != uint64(10*len(want)) || s.Repeats != uint64(2*len(want)) || s.Late != 0 || s.Expired != 0 || s.Unended != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}
