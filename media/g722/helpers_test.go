package g722_test

import "github.com/brisvox/brisvox/media/g722"

// encodeFrames encodes pcm in 20 ms frames (320 samples), the last one
// possibly shorter, and returns all bytes.
func encodeFrames(e *g722.Encoder, pcm []int16) []byte {
	out := make([]byte, len(pcm)/2)
	n := 0
	for off := 0; off < len(pcm); off += 320 {
		n += e.Encode(out[n:], pcm[off:min(off+320, len(pcm))])
	}
	return out[:n]
}

// decodeFrames decodes codes in 20 ms frames (160 bytes).
func decodeFrames(d *g722.Decoder, codes []byte) []int16 {
	out := make([]int16, 2*len(codes))
	n := 0
	for off := 0; off < len(codes); off += 160 {
		n += d.Decode(out[n:], codes[off:min(off+160, len(codes))])
	}
	return out[:n]
}
