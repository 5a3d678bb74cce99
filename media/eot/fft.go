package eot

import (
	"math"
	"math/cmplx"
)

// cfft is a mixed-radix complex FFT (decimation in time) for one fixed
// length, planned at construction: the radices, each level's twiddles and
// each radix's small DFT matrix are precomputed, so a transform does no
// allocation and no trigonometry. It is not safe for concurrent use (one
// scratch buffer).
type cfft struct {
	n       int
	radices []int          // product n, outermost first
	twiddle [][]complex128 // per level: W_L^(q*u) at u*p+q, L the level's length
	dft     [][]complex128 // per level: W_p^(q*s mod p) at s*p+q
	scratch []complex128   // len max radix
}

// newCFFT plans a transform of length n, which must factor into 2, 3, 4 and
// 5 (the radices used; 4 before 2 to save passes).
func newCFFT(n int) *cfft {
	c := &cfft{n: n}
	rest := n
	for _, p := range []int{4, 2, 3, 5} {
		for rest%p == 0 {
			c.radices = append(c.radices, p)
			rest /= p
		}
	}
	if rest != 1 || n < 1 {
		panic("eot: newCFFT: length must factor into 2, 3 and 5") // a programming error: lengths are constants
	}
	length, maxP := n, 1
	for _, p := range c.radices {
		m := length / p
		tw := make([]complex128, length)
		for u := range m {
			for q := range p {
				tw[u*p+q] = unitRoot(q*u, length)
			}
		}
		d := make([]complex128, p*p)
		for s := range p {
			for q := range p {
				d[s*p+q] = unitRoot((q*s)%p, p)
			}
		}
		c.twiddle = append(c.twiddle, tw)
		c.dft = append(c.dft, d)
		maxP = max(maxP, p)
		length = m
	}
	c.scratch = make([]complex128, maxP)
	return c
}

// unitRoot is exp(-2*pi*i*k/n).
func unitRoot(k, n int) complex128 {
	return cmplx.Rect(1, -2*math.Pi*float64(k)/float64(n))
}

// transform writes the DFT of in (length n) to out (length n). in and out
// must not overlap.
func (c *cfft) transform(out, in []complex128) {
	if len(c.radices) == 0 { // n == 1
		out[0] = in[0]
		return
	}
	c.work(out[:c.n], in, 1, 0)
}

// work writes to out the DFT of in[0], in[stride], in[2*stride], ...
// (len(out) values): it transforms the radix's p interleaved subsequences
// into the p quarters (fifths, ...) of out, then combines them in place.
func (c *cfft) work(out, in []complex128, stride, level int) {
	p := c.radices[level]
	m := len(out) / p
	if m == 1 {
		for q := range p {
			out[q] = in[q*stride]
		}
	} else {
		for q := range p {
			c.work(out[q*m:(q+1)*m], in[q*stride:], stride*p, level+1)
		}
	}
	tw := c.twiddle[level]
	switch p {
	case 2:
		for u := range m {
			a := out[u]
			b := out[m+u] * tw[u*2+1]
			out[u] = a + b
			out[m+u] = a - b
		}
	case 4:
		for u := range m {
			t := tw[u*4 : u*4+4]
			a0 := out[u]
			a1 := out[m+u] * t[1]
			a2 := out[2*m+u] * t[2]
			a3 := out[3*m+u] * t[3]
			s02, d02 := a0+a2, a0-a2
			s13, d13 := a1+a3, a1-a3
			// -i*d13: multiplying by W_4 = -i.
			d13i := complex(imag(d13), -real(d13))
			out[u] = s02 + s13
			out[m+u] = d02 + d13i
			out[2*m+u] = s02 - s13
			out[3*m+u] = d02 - d13i
		}
	default:
		d := c.dft[level]
		sc := c.scratch[:p]
		for u := range m {
			for q := range p {
				sc[q] = out[q*m+u] * tw[u*p+q]
			}
			for s := range p {
				row := d[s*p : s*p+p]
				acc := sc[0]
				for q := 1; q < p; q++ {
					acc += sc[q] * row[q]
				}
				out[s*m+u] = acc
			}
		}
	}
}

// rfftPower computes the power spectrum |X[k]|^2, k = 0..n/2, of a real
// signal of even length n through one complex FFT of length n/2: the even
// samples go to the real parts, the odd ones to the imaginary parts, and the
// two half-length spectra are separated afterwards.
type rfftPower struct {
	n    int
	half *cfft
	z    []complex128 // packed input, len n/2
	zf   []complex128 // its transform, len n/2
	rot  []complex128 // W_n^k, k = 0..n/2
}

func newRFFTPower(n int) *rfftPower {
	r := &rfftPower{
		n:    n,
		half: newCFFT(n / 2),
		z:    make([]complex128, n/2),
		zf:   make([]complex128, n/2),
		rot:  make([]complex128, n/2+1),
	}
	for k := range r.rot {
		r.rot[k] = unitRoot(k, n)
	}
	return r
}

// power writes |DFT(x)[k]|^2 for k = 0..n/2 to dst (len n/2+1); x has len n.
func (r *rfftPower) power(dst, x []float64) {
	h := r.n / 2
	for j := range h {
		r.z[j] = complex(x[2*j], x[2*j+1])
	}
	r.half.transform(r.zf, r.z)
	for k := 0; k <= h; k++ {
		zk := r.zf[k%h]
		zc := cmplx.Conj(r.zf[(h-k)%h])
		even := (zk + zc) * 0.5
		diff := (zk - zc) * 0.5
		odd := complex(imag(diff), -real(diff)) // diff / i
		v := even + r.rot[k]*odd
		dst[k] = real(v)*real(v) + imag(v)*imag(v)
	}
}
