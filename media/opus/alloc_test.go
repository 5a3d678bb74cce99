//go:build cgo

package opus

import "testing"

// TestNoAllocsPerFrame pins Encode, Decode, Conceal and DecodeFEC at zero
// allocations. hraban keeps the libopus state in a Go byte slice made at
// construction and passes the caller's slices to C, so nothing is made per
// call; cgo's pointer checks allocate nothing.
// Mutations caught: an error or a slice built on the success path, e.g. a
// fmt.Errorf evaluated eagerly or a packet copied before decoding.
func TestNoAllocsPerFrame(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	enc, err := NewEncoder(EncoderConfig{FEC: true, PacketLossPercent: 20})
	if err != nil {
		t.Fatal(err)
	}
	in := speechLike(48000, 960*10)
	packets := encodeAll(t, enc, in)
	dec, err := NewDecoder(DecoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, MaxPacketBytes)
	pcm := make([]int16, 960)
	i := 0
	calls := []struct {
		name string
		call func()
	}{
		{"encode", func() {
			i++
			if _, err := enc.Encode(in[i%10*960:][:960], out); err != nil {
				t.Fatal(err)
			}
		}},
		{"decode", func() {
			i++
			if _, err := dec.Decode(packets[i%10], pcm); err != nil {
				t.Fatal(err)
			}
		}},
		{"conceal", func() {
			if _, err := dec.Conceal(pcm); err != nil {
				t.Fatal(err)
			}
		}},
		{"decode fec", func() {
			i++
			if err := dec.DecodeFEC(packets[i%10], pcm); err != nil {
				t.Fatal(err)
			}
		}},
		{"stats", func() { _ = dec.Stats() }},
	}
	for _, c := range calls {
		if a := testing.AllocsPerRun(200, c.call); a != 0 {
			t.Errorf("%s: %.1f allocations per frame, want 0", c.name, a)
		}
	}
}
