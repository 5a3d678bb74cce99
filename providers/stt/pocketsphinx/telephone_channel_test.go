package pocketsphinx

import (
	"math"
	"testing"
)

// tone is n samples of a sine at 16 kHz.
func tone(n int, freq, amp float64) []int16 {
	out := make([]int16, n)
	for i := range out {
		out[i] = int16(math.Round(amp * math.Sin(2*math.Pi*freq*float64(i)/16000)))
	}
	return out
}

// levels are the power of ref, and of got-ref (the error), over the
// middle of the signals (the ends hold the filters' ramps), in dB.
func levels(ref, got []int16) (signal, errs float64) {
	var ps, pe float64
	for i := len(ref) / 4; i < 3*len(ref)/4; i++ {
		d := float64(got[i]) - float64(ref[i])
		ps += float64(ref[i]) * float64(ref[i])
		pe += d * d
	}
	return 10 * math.Log10(ps), 10 * math.Log10(pe)
}

// TestTelephoneChannel checks the measurement's line simulation: a 1 kHz
// tone comes back aligned with what went in (the resamplers' delay cut
// off), with G.711's quantization noise on B and C and next to none on D;
// a 6 kHz tone, above the line's 4 kHz, does not come through B, C or D.
// Mutations caught: the delay not cut off (the 1 kHz error is as loud as
// the tone), the codec skipped (B's error falls to D's), the line not
// narrowed (6 kHz comes through), a length change.
func TestTelephoneChannel(t *testing.T) {
	tests := []struct {
		ch               channel
		snrMin, snrMax   float64 // 1 kHz: signal over error, dB
		highMax, highMin float64 // 6 kHz: out over in, dB (A-law has no zero: its idle noise is ±8)
	}{
		{ch: wideband, snrMin: math.Inf(1), snrMax: math.Inf(1), highMin: 0, highMax: 0},
		{ch: mulaw, snrMin: 33, snrMax: 45, highMin: math.Inf(-1), highMax: -50},
		{ch: alaw, snrMin: 33, snrMax: 45, highMin: math.Inf(-1), highMax: -50},
		{ch: narrowband, snrMin: 60, snrMax: math.Inf(1), highMin: math.Inf(-1), highMax: -50},
	}
	for _, tt := range tests {
		t.Run(tt.ch.String(), func(t *testing.T) {
			low := tone(16000, 1000, 8000)
			got := tt.ch.apply(t, low)
			if len(got) != len(low) {
				t.Fatalf("%d samples out of %d", len(got), len(low))
			}
			sig, errs := levels(low, got)
			if snr := sig - errs; snr < tt.snrMin || snr > tt.snrMax {
				t.Errorf("1 kHz: SNR %.1f dB, want [%v, %v]", snr, tt.snrMin, tt.snrMax)
			}
			high := tone(16000, 6000, 8000)
			in, _ := levels(high, make([]int16, len(high)))
			out, _ := levels(tt.ch.apply(t, high), make([]int16, len(high)))
			g := out - in
			if g < tt.highMin || g > tt.highMax {
				t.Errorf("6 kHz: gain %.1f dB, want [%v, %v]", g, tt.highMin, tt.highMax)
			}
			t.Logf("1 kHz SNR %.1f dB, 6 kHz gain %.1f dB", sig-errs, g)
		})
	}
}
