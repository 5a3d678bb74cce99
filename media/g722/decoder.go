package g722

// Decoder decodes G.722 at 64 kbit/s into 16 kHz PCM16 mono. The zero
// value is not ready: use NewDecoder.
type Decoder struct {
	// diff and sum are the receive QMF's histories of rl-rh and rl+rh,
	// index 11 the newest.
	diff, sum [12]int32
	low, high band
}

// NewDecoder returns a Decoder in the initial state of the
// Recommendation.
func NewDecoder() *Decoder {
	d := &Decoder{}
	d.Reset()
	return d
}

// Reset returns the decoder to its initial state, as at the start of a new
// stream.
func (d *Decoder) Reset() {
	d.diff = [12]int32{}
	d.sum = [12]int32{}
	d.low.reset(detLowInit)
	d.high.reset(detHighInit)
}

// Decode decodes src into dst and returns the samples written: two per
// byte, 2*len(src), or fewer when dst is shorter (then only the first
// len(dst)/2 bytes are decoded, and an odd last slot of dst is left
// alone). Every byte is a valid code word; it never panics.
//
// The receive QMF can overshoot full scale (on loud speech, or on codes no
// encoder of a real signal sends); the output saturates there. libspandsp
// 0.0.6 wraps such a sample to the opposite sign instead, a full-scale
// click; that is the one place this decoder differs from it, on purpose
// (the reference test checks both halves of that statement).
func (d *Decoder) Decode(dst []int16, src []byte) int {
	n := min(len(src), len(dst)/2)
	for i := range n {
		x0, x1 := d.decodeByte(src[i])
		dst[2*i], dst[2*i+1] = int16(sat16(x0)), int16(sat16(x1))
	}
	return 2 * n
}

// decodeByte decodes one code word into two output samples, the older
// first, before the output saturation.
func (d *Decoder) decodeByte(code byte) (int32, int32) {
	rl := d.low.decodeLow(int32(code & 0x3f))
	rh := d.high.decodeHigh(int32(code >> 6))

	// The receive QMF.
	copy(d.diff[:11], d.diff[1:])
	copy(d.sum[:11], d.sum[1:])
	d.diff[11], d.sum[11] = rl-rh, rl+rh
	var x0, x1 int32
	for i := 0; i < 12; i++ {
		x0 += qmfCoeffs[2*i] * d.diff[11-i]
		x1 += qmfCoeffs[2*i+1] * d.sum[11-i]
	}
	return x0 >> 11, x1 >> 11
}

// decodeLow reconstructs one low band sample from its 6-bit code (INVQBL,
// RECONS, LIMIT) and adapts the band with the code's top four bits, as the
// encoder did.
func (b *band) decodeLow(il int32) int32 {
	rl := clamp(b.s+(b.det*qm6[il])>>15, -16384, 16383)
	ril := il >> 2
	dl := (b.det * qm4[ril]) >> 15
	b.adaptStep(wl[rl42[ril]], nbLowMax, shiftLow)
	b.predict(dl)
	return rl
}

// decodeHigh reconstructs one high band sample from its 2-bit code and
// adapts the band.
func (b *band) decodeHigh(ih int32) int32 {
	dh := (b.det * qm2[ih]) >> 15
	rh := clamp(b.s+dh, -16384, 16383)
	b.adaptStep(wh[rh2[ih]], nbHighMax, shiftHigh)
	b.predict(dh)
	return rh
}
