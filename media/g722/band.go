package g722

// band is one sub-band's ADPCM state, the same in encoder and decoder: the
// backward-adaptive step size and the pole-zero predictor. Values are held
// in int32 but kept in the Recommendation's 16-bit ranges (sat16), so the
// arithmetic is its 16-bit fixed point.
type band struct {
	s  int32 // the signal estimate s(n): sp + sz
	sz int32 // the zero section's part of it
	nb int32 // the log step size
	// det is the step size the quantizers scale by.
	det    int32
	a1, a2 int32    // pole coefficients
	b      [6]int32 // zero coefficients
	d      [6]int32 // quantized differences d(n-1)..d(n-6)
	p1, p2 int32    // partial reconstructions p(n-1), p(n-2)
	r1, r2 int32    // reconstructed signals r(n-1), r(n-2)
}

// reset puts the band in its initial state with step size det.
func (b *band) reset(det int32) {
	*b = band{det: det}
}

// sat16 clamps x to the int16 range (the Recommendation's saturating
// arithmetic).
func sat16(x int32) int32 {
	if x > 32767 {
		return 32767
	}
	if x < -32768 {
		return -32768
	}
	return x
}

// clamp limits x to [lo, hi].
func clamp(x, lo, hi int32) int32 {
	if x > hi {
		return hi
	}
	if x < lo {
		return lo
	}
	return x
}

// magnitude is the quantizers' magnitude of a difference: x for x >= 0 and
// the ones' complement -x-1 for a negative x, as the Recommendation folds
// it.
func magnitude(x int32) int32 {
	if x < 0 {
		return ^x
	}
	return x
}

// adaptStep updates the log step size nb with multiplier w (LOGSCL/LOGSCH:
// a leak of 127/128 and a bound of 0..max) and derives the step size det
// from it.
func (b *band) adaptStep(w, max, shift int32) {
	b.nb = clamp((b.nb*127)>>7+w, 0, max)
	b.det = stepSize(b.nb, shift)
}

// stepSize is SCALEL/SCALEH: the step size of log step size nb, a table
// lookup of its fraction and a shift by its integer part.
func stepSize(nb, shift int32) int32 {
	frac := (nb >> 6) & 31
	sh := shift - (nb >> 11)
	var v int32
	if sh < 0 {
		v = ilb[frac] << -sh
	} else {
		v = ilb[frac] >> sh
	}
	return v << 2
}

// signsDiffer is -1 when x and y have different signs (negative against
// zero or positive, as the Recommendation's sign bit tells them) and 0
// otherwise; both are in the int16 range, so bit 31 is the sign.
func signsDiffer(x, y int32) int32 {
	return (x ^ y) >> 31
}

// negateIf returns -x when mask is -1 and x when it is 0, without a branch
// (the sign tests of the adaptation are a coin toss on speech).
func negateIf(x, mask int32) int32 {
	return (x ^ mask) - mask
}

// predict runs the adaptive predictor (block 4 of either band) on the new
// quantized difference d: reconstruct, adapt the pole and zero coefficients
// by their sign algorithms, shift the delay lines, and compute the next
// estimate s.
func (b *band) predict(d int32) {
	r := sat16(b.s + d)  // RECONS: the reconstructed signal
	p := sat16(b.sz + d) // PARREC: the partial reconstruction

	// UPPOL2: the second pole. -4*a1 when p and p1 agree in sign, 4*a1 when
	// not; then +-128 as p and p2 agree or not; a leak of 127/128.
	g := min(negateIf(sat16(b.a1<<2), ^signsDiffer(p, b.p1)), 32767) >> 7
	g += negateIf(128, signsDiffer(p, b.p2))
	a2 := clamp(g+(b.a2*32512)>>15, -12288, 12288)

	// UPPOL1: the first pole, +-192 and a leak of 255/256, bounded by the
	// new second.
	lim := 15360 - a2
	a1 := clamp(negateIf(192, signsDiffer(p, b.p1))+(b.a1*32640)>>15, -lim, lim)

	// UPZERO: the six zeros, +-128 as d and each past difference agree in
	// sign (nothing when d is 0), a leak of 255/256.
	var step int32
	if d != 0 {
		step = 128
	}
	bb, dd := &b.b, &b.d
	bb[0] = (bb[0]*32640)>>15 + negateIf(step, signsDiffer(d, dd[0]))
	bb[1] = (bb[1]*32640)>>15 + negateIf(step, signsDiffer(d, dd[1]))
	bb[2] = (bb[2]*32640)>>15 + negateIf(step, signsDiffer(d, dd[2]))
	bb[3] = (bb[3]*32640)>>15 + negateIf(step, signsDiffer(d, dd[3]))
	bb[4] = (bb[4]*32640)>>15 + negateIf(step, signsDiffer(d, dd[4]))
	bb[5] = (bb[5]*32640)>>15 + negateIf(step, signsDiffer(d, dd[5]))

	// DELAYA.
	dd[5], dd[4], dd[3], dd[2], dd[1], dd[0] = dd[4], dd[3], dd[2], dd[1], dd[0], d
	b.p2, b.p1 = b.p1, p
	b.r2, b.r1 = b.r1, r
	b.a1, b.a2 = a1, a2

	// FILTEP, FILTEZ, PREDIC.
	sp := sat16((a1*sat16(r+r))>>15 + (a2*sat16(b.r2+b.r2))>>15)
	sz := (bb[0]*sat16(dd[0]+dd[0]))>>15 +
		(bb[1]*sat16(dd[1]+dd[1]))>>15 +
		(bb[2]*sat16(dd[2]+dd[2]))>>15 +
		(bb[3]*sat16(dd[3]+dd[3]))>>15 +
		(bb[4]*sat16(dd[4]+dd[4]))>>15 +
		(bb[5]*sat16(dd[5]+dd[5]))>>15
	b.sz = sat16(sz)
	b.s = sat16(sp + b.sz)
}
