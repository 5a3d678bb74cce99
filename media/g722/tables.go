package g722

// The constants and tables of the Recommendation (ITU-T G.722 section 3 and
// 4), in its fixed-point scaling. They are read-only.

// qmfCoeffs are the 24 taps h(0)..h(23) of the transmit and receive QMF,
// scaled by 2^13. They are symmetric: h(i) == h(23-i).
var qmfCoeffs = [24]int32{
	3, -11, -11, 53, 12, -156, 32, 362, -210, -805, 951, 3876,
	3876, 951, -805, -210, 362, 32, -156, 12, 53, -11, -11, 3,
}

// Low band.
var (
	// q6 are the 6-bit quantizer's decision levels (of the magnitude, in
	// units of the step size det / 4096), for mil = 1..29; a magnitude at or
	// above the last one is interval 30.
	q6 = [31]int32{
		0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473, 530, 587, 650, 714,
		786, 858, 940, 1023, 1121, 1219, 1339, 1458, 1612, 1765, 1980, 2195, 2557, 2919, 0,
	}
	// q6Count[u] is how many of the levels q6[1..29] are at most u; past
	// the last level (2919) it stays 29.
	q6Count = func() (t [2920]uint8) {
		for u := range t {
			for k := 1; k < 30; k++ {
				if q6[k] <= int32(u) {
					t[u]++
				}
			}
		}
		return t
	}()
	// ilp and iln map an interval mil to the 6-bit code of a positive and a
	// negative difference.
	ilp = [31]int32{
		0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47,
		46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32,
	}
	iln = [31]int32{
		0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19,
		18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4,
	}
	// qm6 is the 6-bit inverse quantizer (the decoder's low band output),
	// indexed by the code; codes 0..3 are never sent and decode as the
	// smallest negative step.
	qm6 = [64]int32{
		-136, -136, -136, -136, -24808, -21904, -19008, -16704,
		-14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856,
		-7192, -6576, -6000, -5456, -4944, -4464, -4008, -3576,
		-3168, -2776, -2400, -2032, -1688, -1360, -1040, -728,
		24808, 21904, 19008, 16704, 14984, 13512, 12280, 11192,
		10232, 9360, 8576, 7856, 7192, 6576, 6000, 5456,
		4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032,
		1688, 1360, 1040, 728, 432, 136, -432, -136,
	}
	// qm4 is the 4-bit inverse quantizer that feeds the adaptation (the
	// code's top four bits), the same in encoder and decoder.
	qm4 = [16]int32{
		0, -20456, -12896, -8968, -6288, -4240, -2584, -1200,
		20456, 12896, 8968, 6288, 4240, 2584, 1200, 0,
	}
	// rl42 maps the 4-bit code to its magnitude class, wl gives the class's
	// log step-size multiplier.
	rl42 = [16]int32{0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0}
	wl   = [8]int32{-60, -30, 58, 172, 334, 538, 1198, 3042}
)

// High band.
var (
	// qh2 is the high band quantizer's single decision level.
	qh2 int32 = 564
	// ihp and ihn map the interval (1 or 2) to the 2-bit code.
	ihp = [3]int32{0, 3, 2}
	ihn = [3]int32{0, 1, 0}
	// qm2 is the 2-bit inverse quantizer.
	qm2 = [4]int32{-7408, -1616, 7408, 1616}
	// rh2 maps the code to its magnitude class, wh gives the multiplier.
	rh2 = [4]int32{2, 1, 2, 1}
	wh  = [3]int32{0, -214, 798}
)

// ilb is the inverse log table of the step size (about 2048 * 2^(i/32),
// as the Recommendation rounds it).
var ilb = [32]int32{
	2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383,
	2435, 2489, 2543, 2599, 2656, 2714, 2774, 2834,
	2896, 2960, 3025, 3091, 3158, 3228, 3298, 3371,
	3444, 3520, 3597, 3676, 3756, 3838, 3922, 4008,
}

// Limits of the log step size and the step size shifts of the two bands.
const (
	nbLowMax    = 18432
	nbHighMax   = 22528
	shiftLow    = 8
	shiftHigh   = 10
	detLowInit  = 32
	detHighInit = 8
)
