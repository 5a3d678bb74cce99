package rtp

import (
	"fmt"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/opus"
)

// Payload types of comfort noise: 13 is RFC 3389's static CN; 19 was
// reserved for it in older profiles and some gateways still send it.
const (
	payloadTypeCN    uint8 = 13
	payloadTypeCNOld uint8 = 19
)

func isCN(pt uint8) bool { return pt == payloadTypeCN || pt == payloadTypeCNOld }

// decoder turns one codec's payloads into PCM at its decode rate and makes
// up audio for lost packets. The input path owns it.
type decoder interface {
	// rate is the rate of what decode and conceal write.
	rate() int
	// decode writes the audio of payload to dst and returns its length.
	decode(dst []int16, payload []byte) (int, error)
	// conceal writes up to n samples for the lostRun-th consecutive lost
	// packet and returns how many it wrote.
	conceal(dst []int16, n, lostRun int) int
	// samples is how many clock units payload spans, 0 when it cannot
	// tell (the ptime detection uses it).
	samples(payload []byte) int
}

// encoder turns PCM at its encode rate into payloads. The sender owns it.
type encoder interface {
	rate() int
	encode(dst []byte, pcm []int16) (int, error)
}

// g711 is PCMU or PCMA: stateless, 8 kHz, one byte per sample.
type g711 struct {
	alaw bool
	last []int16 // the last decoded packet, for concealment
}

func (g *g711) rate() int { return 8000 }

func (g *g711) decode(dst []int16, payload []byte) (int, error) {
	var n int
	if g.alaw {
		n = media.AlawDecode(dst, payload)
	} else {
		n = media.MulawDecode(dst, payload)
	}
	g.last = append(g.last[:0], dst[:n]...)
	return n, nil
}

func (g *g711) conceal(dst []int16, n, lostRun int) int {
	n = min(n, len(dst))
	media.ConcealPCM(dst[:n], g.last, lostRun)
	return n
}

func (g *g711) samples(payload []byte) int { return len(payload) }

func (g *g711) encode(dst []byte, pcm []int16) (int, error) {
	if len(dst) < len(pcm) {
		return 0, fmt.Errorf("%w: g711 payload buffer %d for %d samples", ErrCodec, len(dst), len(pcm))
	}
	if g.alaw {
		return media.AlawEncode(dst, pcm), nil
	}
	return media.MulawEncode(dst, pcm), nil
}

// opusDecoder decodes at the input rate directly (libopus decodes any
// stream at any of its rates, cheaper than 48 kHz and a resampler).
type opusDecoder struct {
	d  *opus.Decoder
	hz int
}

func (o *opusDecoder) rate() int { return o.hz }

func (o *opusDecoder) decode(dst []int16, payload []byte) (int, error) {
	return o.d.Decode(payload, dst)
}

func (o *opusDecoder) conceal(dst []int16, n, _ int) int {
	k, err := o.d.Conceal(dst)
	if err != nil {
		clear(dst[:min(n, len(dst))])
		return min(n, len(dst))
	}
	return k
}

// samples reads the duration from the TOC byte (RFC 6716 3.1): the
// session's clock is 48 kHz.
func (o *opusDecoder) samples(payload []byte) int { return opusSamples(payload) }

// opusFrameUnits is the frame duration of each TOC configuration, in 48 kHz
// units (RFC 6716 table 2).
var opusFrameUnits = [32]uint16{
	480, 960, 1920, 2880, 480, 960, 1920, 2880, 480, 960, 1920, 2880, // SILK
	480, 960, 480, 960, // hybrid
	120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, 120, 240, 480, 960, // CELT
}

func opusSamples(p []byte) int {
	if len(p) == 0 {
		return 0
	}
	f := int(opusFrameUnits[p[0]>>3])
	switch p[0] & 3 {
	case 0:
		return f
	case 1, 2:
		return 2 * f
	}
	if len(p) < 2 {
		return 0
	}
	return f * int(p[1]&0x3f)
}

type opusEncoder struct {
	e  *opus.Encoder
	hz int
}

func (o *opusEncoder) rate() int { return o.hz }

func (o *opusEncoder) encode(dst []byte, pcm []int16) (int, error) {
	return o.e.Encode(pcm, dst)
}

// newDecoder makes the decoder of p's codec; Opus decodes at inputRate.
func newDecoder(p Params, inputRate int) (decoder, error) {
	switch p.Codec {
	case CodecPCMU:
		return &g711{last: make([]int16, 0, 8000*maxDecodeMS/1000)}, nil
	case CodecPCMA:
		return &g711{alaw: true, last: make([]int16, 0, 8000*maxDecodeMS/1000)}, nil
	case CodecG722:
		return newG722Decoder()
	case CodecOpus:
		d, err := opus.NewDecoder(opus.DecoderConfig{SampleRate: inputRate})
		if err != nil {
			return nil, fmt.Errorf("%w: opus decoder: %w", ErrCodec, err)
		}
		return &opusDecoder{d: d, hz: inputRate}, nil
	}
	return nil, fmt.Errorf("%w: codec %q", ErrInvalidParams, p.Codec)
}

// newEncoder makes the encoder of p's codec; Opus encodes from outputRate.
func newEncoder(p Params, outputRate int) (encoder, error) {
	switch p.Codec {
	case CodecPCMU:
		return &g711{}, nil
	case CodecPCMA:
		return &g711{alaw: true}, nil
	case CodecG722:
		return newG722Encoder()
	case CodecOpus:
		e, err := opus.NewEncoder(opus.EncoderConfig{SampleRate: outputRate, FrameDuration: p.PtimeOut})
		if err != nil {
			return nil, fmt.Errorf("%w: opus encoder: %w", ErrCodec, err)
		}
		return &opusEncoder{e: e, hz: outputRate}, nil
	}
	return nil, fmt.Errorf("%w: codec %q", ErrInvalidParams, p.Codec)
}

// samplesAt is how many samples d lasts at hz.
func samplesAt(hz int, d time.Duration) int { return int(int64(hz) * int64(d) / int64(time.Second)) }

// Buffer sizes: a packet decodes to at most maxDecodeMS of audio (an Opus
// packet of several frames; G.711 and G.722 payloads are held to it by
// the jitter buffer's slot size), and a packet sent is at most MaxPtime.
const (
	maxDecodeMS = 120
	// maxWideRate is the highest decode or encode rate of G.711 and G.722.
	maxWideRate = 16000
	// g7xxMaxPayload is the jitter buffer's slot for G.711 and G.722:
	// 120 ms (twice the longest ptime we accept).
	g7xxMaxPayload = 8000 * maxDecodeMS / 1000
	// resampleSlack covers the resampler's rounding of a block.
	resampleSlack = 8
)

// maxLineSamples is the longest decoded packet: Opus decodes at
// inputRate, G.722 at 16 kHz, G.711 at 8 kHz.
func maxLineSamples(inputRate int) int { return max(inputRate, maxWideRate) * maxDecodeMS / 1000 }
