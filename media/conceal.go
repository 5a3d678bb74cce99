package media

// concealFrames is how many consecutive lost frames ConcealPCM fills with
// the attenuated last frame before it plays silence.
const concealFrames = 5

// ConcealPCM fills dst for the lostRun-th consecutive lost frame (1 for the
// first) by repeating last, attenuated by 6 dB (a halving) per lost frame:
// -6 dB for the first, -30 dB for the fifth, silence from the sixth on, so
// a short gap is bridged and a long one fades out instead of buzzing. When
// dst is longer than last, last repeats; an empty last, or lostRun < 1 with
// nothing to repeat, gives silence. lostRun < 1 copies last unattenuated.
// It does not allocate.
func ConcealPCM(dst []int16, last []int16, lostRun int) {
	if len(last) == 0 || lostRun > concealFrames {
		clear(dst)
		return
	}
	shift := uint(max(lostRun, 0))
	for i := range dst {
		dst[i] = last[i%len(last)] >> shift
	}
}
