package media

// G.711 (ITU-T G.711) companding: mu-law (North America, Japan) and A-law
// (the rest of the world) map 16-bit linear PCM to 8-bit codes and back.
//
// The rounding follows the ITU-T reference software (G.191 STL g711.c): a
// 16-bit sample is treated as left-justified 14-bit (mu-law) or 13-bit
// (A-law) PCM, and a negative sample is folded with the ones' complement
// (^x, i.e. -x-1), so x and ^x get mirror codes. In particular -1 encodes
// to the negative code of zero (mu-law 0x7F, A-law 0x55), not to the
// smallest negative step as a two's-complement fold would give.
//
// Everything is table-driven. Because of the left-justified input, mu-law
// encoding depends only on x>>2 and A-law encoding only on x>>4, so the
// encode tables have 16384 and 4096 entries; the decode tables have 256.
// The tables are built once, immutable, from the segment/mantissa formulas.

// mulawBias is the bias of mu-law in 14-bit units (132 in 16-bit units):
// adding it makes the segment boundaries powers of two.
const mulawBias = 33

// mulawClip is the largest biased 14-bit magnitude (0x1FFF).
const mulawClip = 0x1FFF

// alawXor is the even-bit inversion applied to every A-law code.
const alawXor = 0x55

// mulawEncodeTable maps uint16(x)>>2 to the mu-law code of x.
var mulawEncodeTable = func() (t [1 << 14]byte) {
	for i := range t {
		// Sign-extend the 14-bit index back to the 14-bit sample value.
		v := int32(int16(uint16(i) << 2))
		t[i] = mulawCompress(v)
	}
	return t
}()

// mulawDecodeTable maps a mu-law code to its 16-bit reconstruction value.
var mulawDecodeTable = func() (t [256]int16) {
	for i := range t {
		t[i] = mulawExpand(byte(i))
	}
	return t
}()

// alawEncodeTable maps uint16(x)>>4 to the A-law code of x.
var alawEncodeTable = func() (t [1 << 12]byte) {
	for i := range t {
		v := int32(int16(uint16(i) << 4))
		t[i] = alawCompress(v)
	}
	return t
}()

// alawDecodeTable maps an A-law code to its 16-bit reconstruction value.
var alawDecodeTable = func() (t [256]int16) {
	for i := range t {
		t[i] = alawExpand(byte(i))
	}
	return t
}()

// mulawCompress is the G.191 mu-law compressor for one 16-bit sample; it
// only builds the table.
func mulawCompress(x int32) byte {
	var mag int32
	if x < 0 {
		mag = (^x) >> 2
	} else {
		mag = x >> 2
	}
	mag += mulawBias
	if mag > mulawClip {
		mag = mulawClip
	}
	// Segment 0 holds biased magnitudes 32..63, segment s 32<<s..(64<<s)-1.
	seg := int32(0)
	for i := mag >> 6; i != 0; i >>= 1 {
		seg++
	}
	mant := (mag >> (seg + 1)) & 0x0F
	code := byte(0x7F - (seg<<4 | mant)) // segment and mantissa are sent inverted
	if x >= 0 {
		code |= 0x80
	}
	return code
}

// mulawExpand is the G.191 mu-law expander for one code.
func mulawExpand(c byte) int16 {
	inv := ^c
	seg := int32(inv>>4) & 0x07
	mant := int32(inv) & 0x0F
	step := int32(4) << (seg + 1)
	v := 0x80<<seg + step*mant + step/2 - 4*mulawBias
	if c < 0x80 {
		v = -v
	}
	return int16(v)
}

// alawCompress is the G.191 A-law compressor for one 16-bit sample.
func alawCompress(x int32) byte {
	var ix int32
	if x < 0 {
		ix = (^x) >> 4
	} else {
		ix = x >> 4
	}
	// Segment 0 and 1 have the same step; above, each doubles.
	if ix > 15 {
		exp := int32(1)
		for ix > 16+15 {
			ix >>= 1
			exp++
		}
		ix = ix - 16 + exp<<4
	}
	if x >= 0 {
		ix |= 0x80
	}
	return byte(ix) ^ alawXor
}

// alawExpand is the G.191 A-law expander for one code.
func alawExpand(c byte) int16 {
	ix := int32(c^alawXor) & 0x7F
	exp := ix >> 4
	mant := ix & 0x0F
	if exp > 0 {
		mant += 16
	}
	mant = mant<<4 + 8
	if exp > 1 {
		mant <<= exp - 1
	}
	if c < 0x80 {
		mant = -mant
	}
	return int16(mant)
}

// MulawEncodeSample returns the mu-law code of one 16-bit sample.
func MulawEncodeSample(x int16) byte { return mulawEncodeTable[uint16(x)>>2] }

// MulawDecodeSample returns the 16-bit linear value of one mu-law code.
func MulawDecodeSample(c byte) int16 { return mulawDecodeTable[c] }

// AlawEncodeSample returns the A-law code of one 16-bit sample.
func AlawEncodeSample(x int16) byte { return alawEncodeTable[uint16(x)>>4] }

// AlawDecodeSample returns the 16-bit linear value of one A-law code.
func AlawDecodeSample(c byte) int16 { return alawDecodeTable[c] }

// MulawEncode writes the mu-law codes of src into dst and returns how many
// it wrote: min(len(dst), len(src)). A short dst is not an error; the
// samples beyond it are left unencoded, and the caller can tell from the
// count. It does not allocate.
func MulawEncode(dst []byte, src []int16) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, x := range src {
		dst[i] = mulawEncodeTable[uint16(x)>>2]
	}
	return n
}

// MulawDecode writes the linear samples of the mu-law codes in src into dst
// and returns how many it wrote: min(len(dst), len(src)), as MulawEncode. It
// does not allocate.
func MulawDecode(dst []int16, src []byte) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, c := range src {
		dst[i] = mulawDecodeTable[c]
	}
	return n
}

// AlawEncode writes the A-law codes of src into dst and returns how many it
// wrote: min(len(dst), len(src)), as MulawEncode. It does not allocate.
func AlawEncode(dst []byte, src []int16) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, x := range src {
		dst[i] = alawEncodeTable[uint16(x)>>4]
	}
	return n
}

// AlawDecode writes the linear samples of the A-law codes in src into dst
// and returns how many it wrote: min(len(dst), len(src)), as MulawEncode. It
// does not allocate.
func AlawDecode(dst []int16, src []byte) int {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	for i, c := range src {
		dst[i] = alawDecodeTable[c]
	}
	return n
}
