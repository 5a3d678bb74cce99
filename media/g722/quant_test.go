package g722

import "testing"

// TestQuantLowIsTheSearch checks quantLow against the Recommendation's
// linear search over every magnitude and every step size the low band can
// reach (every log step size 0..18432 through SCALEL).
// Mutations caught: the -1 or the +1 of the bound dropped, q6Count built
// with < for <=, or its clamp off by one; each misplaces a magnitude on a
// decision level.
func TestQuantLowIsTheSearch(t *testing.T) {
	dets := map[int32]bool{}
	for nb := int32(0); nb <= nbLowMax; nb++ {
		dets[stepSize(nb, shiftLow)] = true
	}
	checked := 0
	for det := range dets {
		for wd := int32(0); wd <= 32767; wd++ {
			want := int32(1)
			for ; want < 30; want++ {
				if wd < (q6[want]*det)>>12 {
					break
				}
			}
			if got := quantLow(wd, det); got != want {
				t.Fatalf("quantLow(%d, det %d) = %d, the search says %d", wd, det, got, want)
			}
			checked++
		}
	}
	t.Logf("%d step sizes, %d magnitudes checked", len(dets), checked)
}
