package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// rtpSpec describes a packet for marshalRTP.
type rtpSpec struct {
	marker    bool
	pt        uint8
	seq       uint16
	ts        uint32
	ssrc      uint32
	csrc      []uint32
	extension bool
	extProf   uint16
	extData   []byte // padded to 32-bit words by marshalRTP
	padding   int    // bytes of padding, 0 for none
	payload   []byte
}

// marshalRTP builds an RTP packet the way a sender would (RFC 3550 5.1).
func marshalRTP(s rtpSpec) []byte {
	b := make([]byte, RTPHeaderLen, RTPHeaderLen+4*len(s.csrc)+4+len(s.extData)+3+len(s.payload)+s.padding)
	b[0] = 2<<6 | byte(len(s.csrc)&0x0f)
	if s.padding > 0 {
		b[0] |= 0x20
	}
	if s.extension {
		b[0] |= 0x10
	}
	b[1] = s.pt & 0x7f
	if s.marker {
		b[1] |= 0x80
	}
	binary.BigEndian.PutUint16(b[2:], s.seq)
	binary.BigEndian.PutUint32(b[4:], s.ts)
	binary.BigEndian.PutUint32(b[8:], s.ssrc)
	for _, c := range s.csrc {
		b = binary.BigEndian.AppendUint32(b, c)
	}
	if s.extension {
		words := (len(s.extData) + 3) / 4
		b = binary.BigEndian.AppendUint16(b, s.extProf)
		b = binary.BigEndian.AppendUint16(b, uint16(words))
		b = append(b, s.extData...)
		b = append(b, make([]byte, 4*words-len(s.extData))...)
	}
	b = append(b, s.payload...)
	if s.padding > 0 {
		b = append(b, make([]byte, s.padding-1)...)
		b = append(b, byte(s.padding))
	}
	return b
}

func TestParseRTP(t *testing.T) {
	payload := []byte{1, 2, 3, 4, 5}
	tests := []struct {
		name    string
		pkt     []byte
		wantErr error
		check   func(t *testing.T, p *RTPPacket)
	}{
		{
			name: "plain header fields",
			pkt:  marshalRTP(rtpSpec{marker: true, pt: 8, seq: 0xBEEF, ts: 0xDEADBEEF, ssrc: 0x01020304, payload: payload}),
			check: func(t *testing.T, p *RTPPacket) {
				// Mutation: masking the payload type with 0xff (the marker
				// leaks in) fails here.
				if !p.Marker || p.PayloadType != 8 || p.SequenceNumber != 0xBEEF || p.Timestamp != 0xDEADBEEF || p.SSRC != 0x01020304 {
					t.Errorf("got %+v", p)
				}
				if !bytes.Equal(p.Payload, payload) {
					t.Errorf("payload %v", p.Payload)
				}
			},
		},
		{
			// Mutation: not skipping 4 bytes per CSRC puts the CSRCs in the
			// payload.
			name: "CSRCs are skipped and readable",
			pkt:  marshalRTP(rtpSpec{pt: 0, csrc: []uint32{7, 8, 9}, payload: payload}),
			check: func(t *testing.T, p *RTPPacket) {
				if p.CSRCCount != 3 || p.CSRC(0) != 7 || p.CSRC(2) != 9 || p.CSRC(3) != 0 || p.CSRC(-1) != 0 {
					t.Errorf("csrc count %d: %d %d %d", p.CSRCCount, p.CSRC(0), p.CSRC(2), p.CSRC(3))
				}
				if !bytes.Equal(p.Payload, payload) {
					t.Errorf("payload %v", p.Payload)
				}
			},
		},
		{
			// Mutation: counting the extension length in bytes instead of
			// 32-bit words, or forgetting its 4-byte header, fails here.
			name: "extension is skipped by its length in words",
			pkt:  marshalRTP(rtpSpec{pt: 0, csrc: []uint32{1}, extension: true, extProf: 0xBEDE, extData: []byte{0x10, 0xAA, 0, 0, 0x21, 1, 2}, payload: payload}),
			check: func(t *testing.T, p *RTPPacket) {
				if !p.Extension || p.ExtensionProfile != 0xBEDE || len(p.ExtensionPayload) != 8 || p.ExtensionPayload[1] != 0xAA {
					t.Errorf("extension %v %x %v", p.Extension, p.ExtensionProfile, p.ExtensionPayload)
				}
				if !bytes.Equal(p.Payload, payload) {
					t.Errorf("payload %v", p.Payload)
				}
			},
		},
		{
			name: "empty extension",
			pkt:  marshalRTP(rtpSpec{pt: 0, extension: true, extProf: 1, payload: payload}),
			check: func(t *testing.T, p *RTPPacket) {
				if !p.Extension || len(p.ExtensionPayload) != 0 || !bytes.Equal(p.Payload, payload) {
					t.Errorf("got %+v", p)
				}
			},
		},
		{
			// Mutation: ignoring the P bit leaves the padding in the payload;
			// stripping one byte less leaves the count byte.
			name: "padding is stripped",
			pkt:  marshalRTP(rtpSpec{pt: 0, padding: 4, payload: payload}),
			check: func(t *testing.T, p *RTPPacket) {
				if p.PaddingLen != 4 || !bytes.Equal(p.Payload, payload) {
					t.Errorf("padding %d payload %v", p.PaddingLen, p.Payload)
				}
			},
		},
		{
			name: "padding of the whole payload leaves it empty",
			pkt:  marshalRTP(rtpSpec{pt: 0, padding: 3}),
			check: func(t *testing.T, p *RTPPacket) {
				if p.PaddingLen != 3 || len(p.Payload) != 0 {
					t.Errorf("padding %d payload %v", p.PaddingLen, p.Payload)
				}
			},
		},
		{
			// Mutation: reading the marker from byte 0 (where the version
			// bits are) sets it here.
			name: "header only, empty payload, no marker",
			pkt:  marshalRTP(rtpSpec{pt: 0}),
			check: func(t *testing.T, p *RTPPacket) {
				if len(p.Payload) != 0 || p.Marker {
					t.Errorf("payload %v", p.Payload)
				}
			},
		},
		{name: "empty datagram", pkt: nil, wantErr: ErrRTPShort},
		{name: "version 0 (STUN)", pkt: []byte{0x00, 0x01, 0, 0}, wantErr: ErrRTPVersion},
		{name: "version 1", pkt: append([]byte{0x40}, make([]byte, 20)...), wantErr: ErrRTPVersion},
		{name: "version 3", pkt: append([]byte{0xC0}, make([]byte, 20)...), wantErr: ErrRTPVersion},
		{name: "11 bytes", pkt: marshalRTP(rtpSpec{})[:11], wantErr: ErrRTPShort},
		{
			// Mutation: not bounds-checking the CSRC list slices past the end.
			name: "CSRC list past the end", pkt: marshalRTP(rtpSpec{csrc: []uint32{1, 2}})[:16], wantErr: ErrRTPShort,
		},
		{
			name:    "extension header past the end",
			pkt:     marshalRTP(rtpSpec{extension: true})[:14],
			wantErr: ErrRTPExtension,
		},
		{
			// Mutation: checking the extension length against the whole
			// packet instead of what follows its header.
			name: "extension data past the end",
			pkt: func() []byte {
				b := marshalRTP(rtpSpec{extension: true, extData: make([]byte, 8), payload: payload})
				binary.BigEndian.PutUint16(b[14:], 4) // 16 bytes claimed, 8+5 present
				return b
			}(),
			wantErr: ErrRTPExtension,
		},
		{
			name: "padding count zero",
			pkt: func() []byte {
				b := marshalRTP(rtpSpec{padding: 2, payload: payload})
				b[len(b)-1] = 0
				return b
			}(),
			wantErr: ErrRTPPadding,
		},
		{
			// Mutation: allowing padding to reach into the header returns a
			// payload slice with a negative length (a panic).
			name: "padding longer than the payload",
			pkt: func() []byte {
				b := marshalRTP(rtpSpec{padding: 2, payload: payload})
				b[len(b)-1] = 8
				return b
			}(),
			wantErr: ErrRTPPadding,
		},
		{
			name: "padding bit with no payload byte",
			pkt: func() []byte {
				b := marshalRTP(rtpSpec{})
				b[0] |= 0x20
				return b
			}(),
			wantErr: ErrRTPPadding,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := RTPPacket{SSRC: 99, Payload: []byte{1}}
			err := ParseRTP(tc.pkt, &p)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if p.SSRC != 0 || p.Payload != nil {
					t.Errorf("packet not zeroed on error: %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			tc.check(t, &p)
		})
	}
}

func TestParseRTPDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	pkt := marshalRTP(rtpSpec{pt: 0, csrc: []uint32{1}, extension: true, extData: []byte{1, 2, 3, 4}, padding: 2, payload: make([]byte, 160)})
	var p RTPPacket
	// Mutation: building a CSRC slice or an extension list allocates.
	if n := testing.AllocsPerRun(100, func() {
		if err := ParseRTP(pkt, &p); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ParseRTP allocates %v times per packet", n)
	}
}

// remarshal builds a packet from parsed fields, for the round trip.
func remarshal(p *RTPPacket) []byte {
	s := rtpSpec{
		marker: p.Marker, pt: p.PayloadType, seq: p.SequenceNumber, ts: p.Timestamp, ssrc: p.SSRC,
		extension: p.Extension, extProf: p.ExtensionProfile, extData: p.ExtensionPayload,
		padding: p.PaddingLen, payload: p.Payload,
	}
	for i := range p.CSRCCount {
		s.csrc = append(s.csrc, p.CSRC(i))
	}
	return marshalRTP(s)
}

func FuzzParseRTP(f *testing.F) {
	f.Add(marshalRTP(rtpSpec{pt: 0, seq: 1, ts: 160, ssrc: 1, payload: make([]byte, 160)}))
	f.Add(marshalRTP(rtpSpec{marker: true, pt: 111, seq: 65535, ts: 1<<32 - 1, ssrc: 7, csrc: []uint32{1, 2}, payload: []byte{9}}))
	f.Add(marshalRTP(rtpSpec{pt: 8, extension: true, extProf: 0xBEDE, extData: []byte{0x10, 1}, padding: 3, payload: []byte{1, 2}}))
	f.Add(marshalRTP(rtpSpec{pt: 0, padding: 1}))
	f.Add([]byte{0x80})
	f.Add([]byte{0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xA4, 0x42}) // STUN
	f.Add([]byte{0xBF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var p RTPPacket
		if err := ParseRTP(pkt, &p); err != nil {
			return
		}
		if len(p.Payload) > len(pkt) || len(pkt) < RTPHeaderLen {
			t.Fatalf("payload %d bytes from a %d-byte packet", len(p.Payload), len(pkt))
		}
		// The payload is a view of the input, ending where the padding starts.
		if len(p.Payload) > 0 && &p.Payload[len(p.Payload)-1] != &pkt[len(pkt)-p.PaddingLen-1] {
			t.Fatal("payload is not the sub-slice before the padding")
		}
		var q RTPPacket
		if err := ParseRTP(remarshal(&p), &q); err != nil {
			t.Fatalf("re-marshalled packet does not parse: %v", err)
		}
		if p.Marker != q.Marker || p.PayloadType != q.PayloadType || p.SequenceNumber != q.SequenceNumber ||
			p.Timestamp != q.Timestamp || p.SSRC != q.SSRC || p.CSRCCount != q.CSRCCount ||
			p.Extension != q.Extension || p.ExtensionProfile != q.ExtensionProfile ||
			!bytes.Equal(p.ExtensionPayload, q.ExtensionPayload) || p.PaddingLen != q.PaddingLen ||
			!bytes.Equal(p.Payload, q.Payload) {
			t.Fatalf("round trip differs:\n%+v\n%+v", p, q)
		}
		for i := range p.CSRCCount {
			if p.CSRC(i) != q.CSRC(i) {
				t.Fatalf("csrc %d differs", i)
			}
		}
	})
}

func BenchmarkParseRTP(b *testing.B) {
	pkt := marshalRTP(rtpSpec{pt: 0, seq: 1, ts: 160, ssrc: 1, extension: true, extData: []byte{1, 2, 3, 4}, payload: make([]byte, 160)})
	var p RTPPacket
	b.ReportAllocs()
	for b.Loop() {
		if err := ParseRTP(pkt, &p); err != nil {
			b.Fatal(err)
		}
	}
}
