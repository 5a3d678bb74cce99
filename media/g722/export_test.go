package g722

// DecodeWide decodes like Decode but returns the receive QMF's output
// before the saturation, so the reference test can check the algorithm and
// the output stage separately.
func (d *Decoder) DecodeWide(dst []int32, src []byte) int {
	n := min(len(src), len(dst)/2)
	for i := range n {
		dst[2*i], dst[2*i+1] = d.decodeByte(src[i])
	}
	return 2 * n
}
