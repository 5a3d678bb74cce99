package g722

// Encoder encodes 16 kHz PCM16 mono into G.722 at 64 kbit/s. The zero
// value is not ready: use NewEncoder.
type Encoder struct {
	// hist is the transmit QMF's input history, hist[23] the newest sample.
	hist [24]int32
	low  band
	high band
}

// NewEncoder returns an Encoder in the initial state of the
// Recommendation.
func NewEncoder() *Encoder {
	e := &Encoder{}
	e.Reset()
	return e
}

// Reset returns the encoder to its initial state, as at the start of a new
// stream.
func (e *Encoder) Reset() {
	e.hist = [24]int32{}
	e.low.reset(detLowInit)
	e.high.reset(detHighInit)
}

// Encode encodes src into dst and returns the bytes written: one byte per
// two samples, len(src)/2, or fewer when dst is shorter (then only the
// first 2*len(dst) samples are encoded). A last, odd sample is dropped:
// G.722 codes samples in pairs, so a caller that streams odd-length chunks
// must carry the odd sample over itself. It never panics.
func (e *Encoder) Encode(dst []byte, src []int16) int {
	n := min(len(src)/2, len(dst))
	for i := range n {
		dst[i] = e.encodePair(int32(src[2*i]), int32(src[2*i+1]))
	}
	return n
}

// encodePair runs the transmit QMF over two input samples (x0 the older)
// and codes the resulting sub-band samples into one byte.
func (e *Encoder) encodePair(x0, x1 int32) byte {
	h := &e.hist
	copy(h[:22], h[2:])
	h[22], h[23] = x0, x1
	// xa sums the even taps over the newest sample and every other one
	// before it, xb the odd taps over the rest.
	var xa, xb int32
	for i := 0; i < 12; i++ {
		xa += qmfCoeffs[2*i] * h[23-2*i]
		xb += qmfCoeffs[2*i+1] * h[22-2*i]
	}
	xl := (xa + xb) >> 14
	xh := (xa - xb) >> 14
	return byte(e.high.encodeHigh(xh)<<6 | e.low.encodeLow(xl))
}

// encodeLow codes one low band sample into its 6-bit code (QUANTL) and
// adapts the band.
func (b *band) encodeLow(xl int32) int32 {
	el := sat16(xl - b.s)
	wd := magnitude(el)
	mil := quantLow(wd, b.det)
	var il int32
	if el < 0 {
		il = iln[mil]
	} else {
		il = ilp[mil]
	}
	ril := il >> 2
	dl := (b.det * qm4[ril]) >> 15 // INVQAL
	b.adaptStep(wl[rl42[ril]], nbLowMax, shiftLow)
	b.predict(dl)
	return il
}

// encodeHigh codes one high band sample into its 2-bit code (QUANTH) and
// adapts the band.
func (b *band) encodeHigh(xh int32) int32 {
	eh := sat16(xh - b.s)
	wd := magnitude(eh)
	mih := int32(1)
	if wd >= (qh2*b.det)>>12 {
		mih = 2
	}
	var ih int32
	if eh < 0 {
		ih = ihn[mih]
	} else {
		ih = ihp[mih]
	}
	dh := (b.det * qm2[ih]) >> 15 // INVQAH
	b.adaptStep(wh[rh2[ih]], nbHighMax, shiftHigh)
	b.predict(dh)
	return ih
}

// quantLow is QUANTL's interval of a magnitude wd at step size det: the
// first mil in 1..29 whose decision level (q6[mil]*det)>>12 exceeds wd, or
// 30. That is one more than the number of levels at or below wd, and a
// level is at or below wd when q6[k]*det < (wd+1)<<12, that is when q6[k]
// <= u below; q6Count counts the levels up to u in one lookup, in place of
// a search with a branch per level.
func quantLow(wd, det int32) int32 {
	u := ((wd+1)<<12 - 1) / det
	return int32(q6Count[min(u, int32(len(q6Count)-1))]) + 1
}
