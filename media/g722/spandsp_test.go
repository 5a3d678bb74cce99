//go:build cgo && spandsp

package g722_test

import (
	"math/rand/v2"
	"testing"

	"github.com/brisvox/brisvox/media/g722"
	"github.com/brisvox/brisvox/media/g722/internal/spandsp"
)

// TestMatchesSpandsp runs the pure Go codec and libspandsp over the same
// inputs, in 20 ms frames so the state carries across calls, and wants the
// encoder's bytes identical and the decoder identical: the decoder is fed
// both the encoder's output and seeded random bytes (every code word,
// including the 6-bit codes 0-3 an encoder never sends). For the decoder,
// "identical" is checked in two halves (see Decoder.Decode): the receive
// QMF's output before saturation, cast to int16 as libspandsp 0.0.6 casts
// it, equals libspandsp's sample for every sample; and Decode's output is
// that value saturated. The test logs how many samples libspandsp wraps.
// Mutations caught: any change to a table entry, a shift, a saturation or
// the order of the adaptation steps shows as the first differing sample.
func TestMatchesSpandsp(t *testing.T) {
	signals := append(syntheticSignals(), fixtureSignals(t)...)
	if len(fixtureSignals(t)) == 0 {
		t.Log("no 16 kHz fixtures in .native/fixtures: the speech part is skipped")
	}
	for _, s := range signals {
		t.Run(s.name, func(t *testing.T) {
			ours := encodeFrames(g722.NewEncoder(), s.samples)
			ref := spandspEncode(t, s.samples)
			compareBytes(t, "encoder", ours, ref)
			compareDecoder(t, "decoder", ref)
		})
	}
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 77))
		codes := make([]byte, 16000)
		for i := range codes {
			codes[i] = byte(r.Uint32())
		}
		compareDecoder(t, "decoder on random bytes", codes)
	}
}

// TestMatchesSpandspAfterReset checks Reset: the second stream of a reused
// Encoder and Decoder matches a fresh libspandsp state.
// Mutation caught: a Reset that forgets a field (the QMF history, a band's
// step size or a predictor coefficient).
func TestMatchesSpandspAfterReset(t *testing.T) {
	enc, dec := g722.NewEncoder(), g722.NewDecoder()
	first := noise(8000, 20000, 9)
	decodeFrames(dec, encodeFrames(enc, first))
	enc.Reset()
	dec.Reset()
	second := sine(8000, 440, 9000)
	ours := encodeFrames(enc, second)
	ref := spandspEncode(t, second)
	compareBytes(t, "encoder after reset", ours, ref)
	got := decodeFrames(dec, ref)
	wide := make([]int32, 2*len(ref))
	g722.NewDecoder().DecodeWide(wide, ref)
	compareSaturated(t, "decoder after reset", got, wide)
}

func spandspEncode(t *testing.T, pcm []int16) []byte {
	t.Helper()
	e, err := spandsp.NewEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := make([]byte, len(pcm)/2)
	n := 0
	for off := 0; off+1 < len(pcm); off += 320 {
		end := min(off+320, len(pcm)&^1)
		n += e.Encode(out[n:], pcm[off:end])
	}
	return out[:n]
}

func spandspDecode(t *testing.T, codes []byte) []int16 {
	t.Helper()
	d, err := spandsp.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out := make([]int16, 2*len(codes))
	n := 0
	for off := 0; off < len(codes); off += 160 {
		end := min(off+160, len(codes))
		n += d.Decode(out[n:], codes[off:end])
	}
	return out[:n]
}

func compareBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, reference %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: byte %d is %#02x, reference %#02x (of %d)", what, i, got[i], want[i], len(got))
		}
	}
}

func compareSamples(t *testing.T, what string, got, want []int16) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples, reference %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: sample %d is %d, reference %d (of %d)", what, i, got[i], want[i], len(got))
		}
	}
}

// compareDecoder decodes codes with ours and libspandsp and checks the two
// halves of the decoder's contract (see TestMatchesSpandsp).
func compareDecoder(t *testing.T, what string, codes []byte) {
	t.Helper()
	ref := spandspDecode(t, codes)
	wide := make([]int32, 2*len(codes))
	d := g722.NewDecoder()
	n := 0
	for off := 0; off < len(codes); off += 160 {
		n += d.DecodeWide(wide[n:], codes[off:min(off+160, len(codes))])
	}
	wide = wide[:n]
	wrapped := make([]int16, len(wide))
	over := 0
	for i, w := range wide {
		wrapped[i] = int16(w)
		if w > 32767 || w < -32768 {
			over++
		}
	}
	compareSamples(t, what+" (before saturation, wrapped like libspandsp)", wrapped, ref)
	compareSaturated(t, what, decodeFrames(g722.NewDecoder(), codes), wide)
	if over > 0 {
		t.Logf("%s: %d of %d samples overshoot full scale: saturated here, wrapped by libspandsp", what, over, len(wide))
	}
}

// compareSaturated wants got to be wide saturated to int16.
func compareSaturated(t *testing.T, what string, got []int16, wide []int32) {
	t.Helper()
	want := make([]int16, len(wide))
	for i, w := range wide {
		want[i] = int16(max(-32768, min(32767, w)))
	}
	compareSamples(t, what+" (saturated output)", got, want)
}
