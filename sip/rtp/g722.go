package rtp

import (
	"fmt"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/g722"
)

// g722Codec is G.722 (media/g722): 16 kHz audio, one byte per two
// samples, on an RTP clock of 8000 (RFC 3551 4.5.2).
type g722Codec struct {
	dec  *g722.Decoder
	enc  *g722.Encoder
	last []int16
}

func newG722Decoder() (decoder, error) {
	return &g722Codec{dec: g722.NewDecoder(), last: make([]int16, 0, maxWideRate*maxDecodeMS/1000)}, nil
}

func newG722Encoder() (encoder, error) { return &g722Codec{enc: g722.NewEncoder()}, nil }

func (g *g722Codec) rate() int { return 16000 }

func (g *g722Codec) decode(dst []int16, payload []byte) (int, error) {
	if len(dst) < 2*len(payload) {
		return 0, fmt.Errorf("%w: g722 %d bytes into %d samples", ErrCodec, len(payload), len(dst))
	}
	n := g.dec.Decode(dst, payload)
	g.last = append(g.last[:0], dst[:n]...)
	return n, nil
}

func (g *g722Codec) conceal(dst []int16, n, lostRun int) int {
	n = min(n, len(dst))
	media.ConcealPCM(dst[:n], g.last, lostRun)
	return n
}

// samples: one byte is two 16 kHz samples, one tick of the 8 kHz clock.
func (g *g722Codec) samples(payload []byte) int { return len(payload) }

func (g *g722Codec) encode(dst []byte, pcm []int16) (int, error) {
	if len(dst) < (len(pcm)+1)/2 {
		return 0, fmt.Errorf("%w: g722 payload buffer %d for %d samples", ErrCodec, len(dst), len(pcm))
	}
	return g.enc.Encode(dst, pcm), nil
}
