//go:build cgo

package opus

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// onePacket is a 20 ms packet of a tone from a default encoder.
func onePacket(t testing.TB) []byte {
	t.Helper()
	enc, err := NewEncoder(EncoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	packets := encodeAll(t, enc, sine(48000, 1000, 0.5, 960*5))
	return packets[4]
}

// TestDecodeBadPackets feeds malformed packets, then a good one.
// Mutations caught: Decode passing an empty packet or a malformed one to
// libopus without an error, an error not wrapping ErrCorruptPacket, a
// refused packet not counted, and a refused packet leaving the decoder
// unable to decode the next.
func TestDecodeBadPackets(t *testing.T) {
	good := onePacket(t)
	toc := good[0] &^ 3 // the same configuration, code 0
	big := make([]byte, 1+maxFrameBytes+1)
	big[0] = toc
	tests := []struct {
		name   string
		packet []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"code 1 with odd payload", []byte{toc | 1, 1, 2, 3}},
		{"code 2 toc only", []byte{toc | 2}},
		{"code 2 first length past the end", []byte{toc | 2, 200, 1, 2}},
		{"code 2 two-byte length cut", []byte{toc | 2, 252}},
		{"code 3 toc only", []byte{toc | 3}},
		{"code 3 zero frames", []byte{toc | 3, 0}},
		{"code 3 over 120 ms", []byte{toc | 3, 7, 0, 0, 0, 0, 0, 0, 0}},
		{"code 3 padding past the end", []byte{toc | 3, 0x41, 10, 1, 2}},
		{"code 3 cbr not divisible", []byte{toc | 3, 2, 1, 2, 3}},
		{"code 3 vbr length past the end", []byte{toc | 3, 0x82, 50, 1, 2}},
		{"frame over 1275 bytes", big},
	}
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, 5760)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := dec.Decode(tt.packet, pcm)
			if !errors.Is(err, ErrCorruptPacket) || n != 0 {
				t.Fatalf("Decode = %d, %v; want 0, ErrCorruptPacket", n, err)
			}
			if got := dec.Stats().Corrupt; got != uint64(i+1) {
				t.Fatalf("corrupt = %d, want %d", got, i+1)
			}
			// libopus refuses them too: the parser is not stricter than
			// libopus (it would count good packets as corrupt).
			if len(tt.packet) > 0 {
				if _, err := dec.dec.Decode(tt.packet, pcm[:5760:5760]); err == nil {
					t.Fatalf("libopus accepts the packet")
				}
			}
			if err := dec.DecodeFEC(tt.packet, pcm); !errors.Is(err, ErrCorruptPacket) {
				t.Fatalf("DecodeFEC = %v, want ErrCorruptPacket", err)
			}
			dec.corrupt.Add(^uint64(0)) // the DecodeFEC refusal, counted above
		})
	}
	if n, err := dec.Decode(good, pcm); err != nil || n != 960 {
		t.Fatalf("good packet after bad ones: %d, %v", n, err)
	}
}

// TestDecodeTruncated cuts a real packet. A packet cut to its TOC byte is
// a legal packet without audio bytes (what DTX senders send), which libopus
// fills in by concealment: counted as DTX, not refused. A packet cut inside
// its frame cannot be told from a shorter one (Opus frames have no
// checksum); it must decode or be refused, never panic.
// Mutation caught: TOC-only packets counted as decoded audio or refused.
func TestDecodeTruncated(t *testing.T) {
	good := onePacket(t)
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	pcm := make([]int16, 960)
	if n, err := dec.Decode(good[:1], pcm); err != nil || n != 960 {
		t.Fatalf("toc only: %d, %v; want 960 samples", n, err)
	}
	if st := dec.Stats(); st != (Stats{DTX: 1}) {
		t.Fatalf("stats %+v, want one dtx", st)
	}
	for cut := 2; cut < len(good); cut++ {
		n, err := dec.Decode(good[:cut], pcm)
		if err == nil && n != 960 || err != nil && !errors.Is(err, ErrCorruptPacket) {
			t.Fatalf("cut to %d bytes: %d, %v", cut, n, err)
		}
	}
}

// TestDecodeRandomBytes decodes random packets with a fixed seed.
// Mutation caught: stats miscounting refusals or successes.
func TestDecodeRandomBytes(t *testing.T) {
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pcm := make([]int16, 5760)
	var ok, bad uint64
	for range 2000 {
		p := make([]byte, rng.IntN(200))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		n, err := dec.Decode(p, pcm)
		switch {
		case err == nil:
			ok++
			if n <= 0 || n > 5760 {
				t.Fatalf("%x: %d samples", p, n)
			}
		case errors.Is(err, ErrCorruptPacket):
			bad++
		default:
			t.Fatalf("%x: %v", p, err)
		}
	}
	st := dec.Stats()
	if st.Decoded+st.DTX != ok || st.Corrupt != bad || bad == 0 || ok == 0 {
		t.Fatalf("stats %+v for %d decoded and %d refused", st, ok, bad)
	}
	t.Logf("%d random packets decoded, %d refused", ok, bad)
}

// TestPCMSize hands buffers of the wrong size to every call.
// Mutations caught: a missing length check (Encode would encode a frame of
// another duration, Decode/Conceal/DecodeFEC would be refused by libopus as
// a corrupt packet or write a short frame), and caller errors counted as
// corrupt packets.
func TestPCMSize(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, MaxPacketBytes)
	for _, n := range []int{0, 1, 480, 959, 961, 1920} {
		if _, err := enc.Encode(make([]int16, n), out); !errors.Is(err, ErrPCMSize) {
			t.Errorf("Encode of %d samples: %v, want ErrPCMSize", n, err)
		}
	}
	if _, err := enc.Encode(make([]int16, 960), nil); !errors.Is(err, ErrPacketBuffer) {
		t.Errorf("Encode into nil: %v, want ErrPacketBuffer", err)
	}

	enc60, err := NewEncoder(EncoderConfig{FrameDuration: 60 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	long := encodeAll(t, enc60, sine(48000, 1000, 0.5, 2880))[0]
	good := onePacket(t)
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"decode into nil", func() error { _, err := dec.Decode(good, nil); return err }},
		{"decode into 959", func() error { _, err := dec.Decode(good, make([]int16, 959)); return err }},
		{"decode 60 ms into 20 ms", func() error { _, err := dec.Decode(long, make([]int16, 960)); return err }},
		{"conceal into nil", func() error { _, err := dec.Conceal(nil); return err }},
		{"conceal into 959", func() error { _, err := dec.Conceal(make([]int16, 959)); return err }},
		{"fec into nil", func() error { return dec.DecodeFEC(good, nil) }},
		{"fec into 959", func() error { return dec.DecodeFEC(good, make([]int16, 959)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, ErrPCMSize) {
				t.Fatalf("%v, want ErrPCMSize", err)
			}
		})
	}
	if st := dec.Stats(); st != (Stats{}) {
		t.Fatalf("stats %+v: caller errors counted", st)
	}
	// A 60 ms packet sets the lost frame to 60 ms.
	if n, err := dec.Decode(long, make([]int16, 2880)); err != nil || n != 2880 || dec.LostFrameSamples() != 2880 {
		t.Fatalf("60 ms packet: %d, %v, lost frame %d", n, err, dec.LostFrameSamples())
	}
	if _, err := dec.Conceal(make([]int16, 960)); !errors.Is(err, ErrPCMSize) {
		t.Fatalf("conceal of a 60 ms frame into 20 ms: %v, want ErrPCMSize", err)
	}
}

// TestEncodeStaysInItsBuffer gives Encode a short slice of a larger array.
// Mutation caught: passing out with its capacity to libopus (hraban hands
// cap(out) to libopus as the room to write).
func TestEncodeStaysInItsBuffer(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{Bitrate: 64000})
	if err != nil {
		t.Fatal(err)
	}
	backing := make([]byte, MaxPacketBytes)
	pcm := sine(48000, 1000, 0.5, 960)
	for _, size := range []int{1, 2, 3, 10, 40} {
		for i := range backing {
			backing[i] = 0xee
		}
		n, err := enc.Encode(pcm, backing[:size])
		if err != nil && !errors.Is(err, ErrPacketBuffer) {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if n > size {
			t.Fatalf("%d bytes: packet of %d", size, n)
		}
		for i := size; i < len(backing); i++ {
			if backing[i] != 0xee {
				t.Fatalf("%d bytes: byte %d written", size, i)
			}
		}
		t.Logf("into %d bytes: %d, %v", size, n, err)
	}
}

// TestDecodeStaysInItsBuffer gives Decode, Conceal and DecodeFEC a pcm
// slice longer than the frame within a larger array.
// Mutation caught: passing pcm with its capacity to Conceal or DecodeFEC
// (hraban hands cap(pcm) to libopus as the duration to make up: 120 ms
// instead of 20). Decode is capped too, though libopus writes no more than
// the packet's duration there.
func TestDecodeStaysInItsBuffer(t *testing.T) {
	good := onePacket(t)
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	backing := make([]int16, 5760)
	calls := []struct {
		name string
		call func(pcm []int16) (int, error)
	}{
		{"decode", func(pcm []int16) (int, error) { return dec.Decode(good, pcm) }},
		{"conceal", dec.Conceal},
		{"fec", func(pcm []int16) (int, error) { return dec.LostFrameSamples(), dec.DecodeFEC(good, pcm) }},
	}
	for _, c := range calls {
		for i := range backing {
			backing[i] = 12345
		}
		n, err := c.call(backing[:1000])
		if err != nil || n != 960 {
			t.Fatalf("%s: %d, %v", c.name, n, err)
		}
		for i := n; i < len(backing); i++ {
			if backing[i] != 12345 {
				t.Fatalf("%s: sample %d written", c.name, i)
			}
		}
	}
}
