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
// from it (SCALEL/SCALEH: a table lookup and a shift).
func (b *band) adaptStep(w, max, shift int32) {
	nb := (b.nb*127)>>7 + w
	b.nb = clamp(nb, 0, max)
	frac := (b.nb >> 6) & 31
	sh := shift - (b.nb >> 11)
	var v int32
	if sh < 0 {
		v = ilb[frac] << -sh
	} else {
		v = ilb[frac] >> sh
	}
	b.det = v << 2
}

// predict runs the adaptive predictor (block 4 of either band) on the new
// quantized difference d: reconstruct, adapt the pole and zero coefficients
// by their sign algorithms, shift the delay lines, and compute the next
// estimate s.
func (b *band) predict(d int32) {
	r := sat16(b.s + d)  // RECONS: the reconstructed signal
	p := sat16(b.sz + d) // PARREC: the partial reconstruction

	// UPPOL2: the second pole.
	neg0, neg1, neg2 := p < 0, b.p1 < 0, b.p2 < 0
	g := sat16(b.a1 << 2)
	if neg0 == neg1 {
		g = -g
	}
	if g > 32767 {
		g = 32767
	}
	g >>= 7
	if neg0 == neg2 {
		g += 128
	} else {
		g -= 128
	}
	a2 := clamp(g+(b.a2*32512)>>15, -12288, 12288)

	// UPPOL1: the first pole, bounded by the new second.
	g = -192
	if neg0 == neg1 {
		g = 192
	}
	lim := 15360 - a2
	a1 := clamp(g+(b.a1*32640)>>15, -lim, lim)

	// UPZERO: the six zeros.
	var step int32
	if d != 0 {
		step = 128
	}
	negd := d < 0
	for i := range b.b {
		leak := (b.b[i] * 32640) >> 15
		if (b.d[i] < 0) == negd {
			b.b[i] = leak + step
		} else {
			b.b[i] = leak - step
		}
	}

	// DELAYA.
	copy(b.d[1:], b.d[:5])
	b.d[0] = d
	b.p2, b.p1 = b.p1, p
	b.r2, b.r1 = b.r1, r
	b.a1, b.a2 = a1, a2

	// FILTEP, FILTEZ, PREDIC.
	sp := sat16((a1*sat16(b.r1+b.r1))>>15 + (a2*sat16(b.r2+b.r2))>>15)
	var sz int32
	for i := range b.b {
		sz += (b.b[i] * sat16(b.d[i]+b.d[i])) >> 15
	}
	b.sz = sat16(sz)
	b.s = sat16(sp + b.sz)
}
