package opus

import (
	"errors"
	"testing"
)

// TestParsePacket pins the TOC and framing reading against hand-built
// packets (RFC 6716 3.1, 3.2).
// Mutations caught: a wrong frame duration for any mode, frames counted
// wrongly, the first frame cut wrongly (FEC detection reads its first byte),
// padding or length bytes counted as audio.
func TestParsePacket(t *testing.T) {
	const (
		silkNB10   = 0 << 3  // SILK NB 10 ms
		silkWB60   = 11 << 3 // SILK WB 60 ms
		hybridFB20 = 15 << 3
		hybridSWB  = 12 << 3 // 10 ms
		celtFB2_5  = 28 << 3
		celtFB20   = 31 << 3
	)
	tests := []struct {
		name        string
		packet      []byte
		mode        mode
		samples48   int
		frames      int
		first       []byte
		payload     int
		stereo      bool
		wantCorrupt bool
	}{
		{"silk 10 ms code 0", []byte{silkNB10, 9, 8}, modeSILK, 480, 1, []byte{9, 8}, 2, false, false},
		{"silk 60 ms stereo", []byte{silkWB60 | 4, 9}, modeSILK, 2880, 1, []byte{9}, 1, true, false},
		{"hybrid 20 ms code 1", []byte{hybridFB20 | 1, 1, 2, 3, 4}, modeHybrid, 960, 2, []byte{1, 2}, 4, false, false},
		{"hybrid fb 10 ms", []byte{14 << 3, 5}, modeHybrid, 480, 1, []byte{5}, 1, false, false},
		{"hybrid swb 20 ms", []byte{13 << 3, 5}, modeHybrid, 960, 1, []byte{5}, 1, false, false},
		{"hybrid 10 ms code 2", []byte{hybridSWB | 2, 1, 7, 8, 9}, modeHybrid, 480, 2, []byte{7}, 3, false, false},
		{"code 2 two-byte length", append([]byte{celtFB20 | 2, 252, 0}, make([]byte, 252+3)...), modeCELT, 960, 2, make([]byte, 252), 255, false, false},
		{"celt 2.5 ms code 3 cbr", []byte{celtFB2_5 | 3, 3, 1, 2, 3, 4, 5, 6}, modeCELT, 120, 3, []byte{1, 2}, 6, false, false},
		{"code 3 vbr", []byte{celtFB20 | 3, 0x80 | 3, 1, 2, 7, 8, 9, 10}, modeCELT, 960, 3, []byte{7}, 4, false, false},
		{"code 3 padding", []byte{celtFB20 | 3, 0x40 | 1, 2, 7, 8, 0, 0}, modeCELT, 960, 1, []byte{7, 8}, 2, false, false},
		{"code 3 padding 254+1", append([]byte{celtFB20 | 3, 0x40 | 1, 255, 1, 7}, make([]byte, 255)...), modeCELT, 960, 1, []byte{7}, 1, false, false},
		{"code 3 vbr one frame", []byte{celtFB20 | 3, 0x80 | 1, 7, 8}, modeCELT, 960, 1, []byte{7, 8}, 2, false, false},
		{"toc only is dtx", []byte{hybridFB20}, modeHybrid, 960, 1, nil, 0, false, false},
		{"code 3 six 20 ms frames", []byte{celtFB20 | 3, 6}, modeCELT, 960, 6, nil, 0, false, false},
		{"code 3 three 60 ms frames", []byte{silkWB60 | 3, 3}, 0, 0, 0, nil, 0, false, true},
		{"code 3 padding 255 then end", []byte{celtFB20 | 3, 0x41, 255}, 0, 0, 0, nil, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := parsePacket(tt.packet)
			if tt.wantCorrupt {
				if !errors.Is(err, ErrCorruptPacket) {
					t.Fatalf("err %v, want ErrCorruptPacket", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.mode != tt.mode || p.frameSamples48 != tt.samples48 || p.frames != tt.frames ||
				string(p.first) != string(tt.first) || p.payload != tt.payload || p.stereo != tt.stereo {
				t.Fatalf("got %+v, want mode %d samples %d frames %d first %v payload %d stereo %v",
					p, tt.mode, tt.samples48, tt.frames, tt.first, tt.payload, tt.stereo)
			}
		})
	}
}

// TestHasLBRR reads the LBRR flag from hand-built first bytes: after one
// VAD flag per 20 ms of SILK (mono), or per channel in stereo.
// Mutation caught: the flag read at the wrong bit for 40/60 ms or stereo.
func TestHasLBRR(t *testing.T) {
	tests := []struct {
		name   string
		packet []byte
		want   bool
	}{
		{"silk 20 ms lbrr", []byte{1 << 3, 0b0100_0000}, true},
		{"silk 20 ms vad only", []byte{1 << 3, 0b1000_0000}, false},
		{"silk 10 ms lbrr", []byte{0, 0b0100_0000}, true},
		{"silk 40 ms lbrr", []byte{2 << 3, 0b0010_0000}, true},
		{"silk 40 ms vad bits only", []byte{2 << 3, 0b1100_0000}, false},
		{"silk 60 ms lbrr", []byte{3 << 3, 0b0001_0000}, true},
		{"silk 20 ms stereo side lbrr", []byte{1<<3 | 4, 0b0001_0000}, true},
		{"silk 20 ms stereo no lbrr", []byte{1<<3 | 4, 0b1010_1111}, false},
		{"hybrid 20 ms lbrr", []byte{15 << 3, 0b0111_1111}, true},
		{"celt never", []byte{31 << 3, 0xff}, false},
		{"toc only", []byte{1 << 3}, false},
		{"malformed", []byte{1<<3 | 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HasFEC(tt.packet); got != tt.want {
				t.Fatalf("HasFEC(%08b) = %v, want %v", tt.packet, got, tt.want)
			}
		})
	}
}
