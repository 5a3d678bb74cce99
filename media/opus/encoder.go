package opus

import "fmt"

// Encoder encodes mono PCM16 frames of a fixed duration into Opus packets.
// It serves one stream from one goroutine.
type Encoder struct {
	enc          *libEncoder
	cfg          EncoderConfig
	frameSamples int
}

// NewEncoder builds an encoder for cfg (zero fields take the defaults).
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	enc, err := newLibEncoder(cfg.SampleRate, cfg.Application)
	if err != nil {
		return nil, fmt.Errorf("%w: new encoder: %w", ErrCodec, err)
	}
	// libopus has checked nothing of these yet: a refusal is a libopus
	// range narrower than Validate's, hence a config error.
	settings := []struct {
		name string
		set  func() error
	}{
		{"bitrate", func() error { return enc.SetBitrate(cfg.Bitrate) }},
		{"complexity", func() error { return enc.SetComplexity(cfg.Complexity) }},
		{"inband fec", func() error { return enc.SetInBandFEC(cfg.FEC) }},
		{"packet loss", func() error { return enc.SetPacketLossPerc(cfg.PacketLossPercent) }},
		{"dtx", func() error { return enc.SetDTX(cfg.DTX) }},
	}
	for _, s := range settings {
		if err := s.set(); err != nil {
			return nil, fmt.Errorf("%w: libopus refused %s: %w", ErrInvalidConfig, s.name, err)
		}
	}
	return &Encoder{enc: enc, cfg: cfg, frameSamples: samplesIn(cfg.SampleRate, cfg.FrameDuration)}, nil
}

// Config is the configuration in use, defaults filled in.
func (e *Encoder) Config() EncoderConfig { return e.cfg }

// FrameSamples is the number of samples Encode takes.
func (e *Encoder) FrameSamples() int { return e.frameSamples }

// Encode encodes one frame of exactly FrameSamples samples into out and
// returns the packet's length. The packet never extends past len(out), and
// libopus makes it fit: a buffer smaller than the bitrate needs lowers the
// quality of that frame (below 3 bytes it holds only the TOC byte, which
// the receiver conceals) rather than failing. Pass MaxPacketBytes, or at
// least 1276 bytes per 20 ms. With DTX on, a packet of 2 bytes or less is a
// silence frame that need not be sent.
func (e *Encoder) Encode(pcm []int16, out []byte) (int, error) {
	if len(pcm) != e.frameSamples {
		return 0, fmt.Errorf("%w: encode got %d samples, a %v frame at %d Hz is %d",
			ErrPCMSize, len(pcm), e.cfg.FrameDuration, e.cfg.SampleRate, e.frameSamples)
	}
	if len(out) == 0 {
		return 0, fmt.Errorf("%w: empty packet buffer", ErrPacketBuffer)
	}
	// hraban passes cap(out) to libopus as the room it may write into: cap
	// it at len so that nothing past the caller's slice is written.
	n, err := e.enc.Encode(pcm, out[:len(out):len(out)])
	if err != nil {
		if bufferTooSmall(err) {
			return 0, fmt.Errorf("%w: %d bytes: %w", ErrPacketBuffer, len(out), err)
		}
		return 0, fmt.Errorf("%w: encode: %w", ErrCodec, err)
	}
	return n, nil
}
