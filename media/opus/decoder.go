package opus

import (
	"fmt"
	"sync/atomic"
)

// Stats is a snapshot of what a Decoder has done, for metrics: every call
// that produced audio is in exactly one of the first four counters, every
// call refused for its packet in Corrupt.
type Stats struct {
	// Decoded counts packets decoded by Decode.
	Decoded uint64 `json:"decoded"`
	// DTX counts packets without audio bytes (a sender's DTX silence, or a
	// placeholder for a lost frame), which libopus fills in by concealment.
	DTX uint64 `json:"dtx"`
	// Concealed counts frames made up by packet loss concealment: Conceal
	// calls, and DecodeFEC calls whose next packet had no usable FEC data.
	Concealed uint64 `json:"concealed"`
	// FECRecovered counts lost frames rebuilt from the next packet's FEC.
	FECRecovered uint64 `json:"fec_recovered"`
	// Corrupt counts packets refused as empty, malformed or undecodable.
	Corrupt uint64 `json:"corrupt"`
}

// Decoder decodes Opus packets of one stream into mono PCM16 and conceals
// lost ones. It serves one stream from one goroutine; Stats may be read
// from any goroutine.
type Decoder struct {
	dec *libDecoder
	cfg DecoderConfig
	// lostSamples is what Conceal and DecodeFEC produce: the duration of the
	// last decoded packet, as libopus advises.
	lostSamples int
	// lastMode is the mode libopus decoded last; FEC cannot follow CELT.
	lastMode mode

	decoded, dtx, concealed, fecRecovered, corrupt atomic.Uint64
}

// NewDecoder builds a decoder for cfg (zero fields take the defaults).
func NewDecoder(cfg DecoderConfig) (*Decoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	dec, err := newLibDecoder(cfg.SampleRate)
	if err != nil {
		return nil, fmt.Errorf("%w: new decoder: %w", ErrCodec, err)
	}
	return &Decoder{dec: dec, cfg: cfg, lostSamples: samplesIn(cfg.SampleRate, cfg.FrameDuration)}, nil
}

// Config is the configuration in use, defaults filled in.
func (d *Decoder) Config() DecoderConfig { return d.cfg }

// LostFrameSamples is the number of samples the next Conceal or DecodeFEC
// writes: the duration of the last decoded packet (FrameDuration before the
// first one).
func (d *Decoder) LostFrameSamples() int { return d.lostSamples }

// Stats returns a snapshot of the counters.
func (d *Decoder) Stats() Stats {
	return Stats{
		Decoded:      d.decoded.Load(),
		DTX:          d.dtx.Load(),
		Concealed:    d.concealed.Load(),
		FECRecovered: d.fecRecovered.Load(),
		Corrupt:      d.corrupt.Load(),
	}
}

// Decode decodes one packet into pcm and returns the number of samples
// written. pcm must hold the packet's whole duration (a 60 ms buffer, or
// 120 ms for packets of several frames, fits any sender). A packet that is
// empty, malformed or refused by libopus is an ErrCorruptPacket, counted in
// Stats.Corrupt; the caller conceals that frame.
func (d *Decoder) Decode(packet []byte, pcm []int16) (int, error) {
	p, err := parsePacket(packet)
	if err != nil {
		d.corrupt.Add(1)
		return 0, err
	}
	want := p.samples(d.cfg.SampleRate)
	if len(pcm) < want {
		return 0, fmt.Errorf("%w: decode into %d samples, the packet holds %d", ErrPCMSize, len(pcm), want)
	}
	// hraban hands cap(pcm) to libopus as the room it may fill: cap it so
	// that nothing past the caller's slice is written.
	n, err := d.dec.Decode(packet, pcm[:want:want])
	if err != nil {
		d.corrupt.Add(1)
		return 0, fmt.Errorf("%w: %d bytes: %w", ErrCorruptPacket, len(packet), err)
	}
	d.lostSamples = n
	d.lastMode = p.mode
	if p.payload == 0 {
		d.dtx.Add(1)
	} else {
		d.decoded.Add(1)
	}
	return n, nil
}

// Conceal makes up LostFrameSamples samples for a lost packet by libopus
// packet loss concealment (it extends the last decoded audio and fades it
// out over consecutive losses) and returns how many it wrote.
func (d *Decoder) Conceal(pcm []int16) (int, error) {
	n := d.lostSamples
	if len(pcm) < n {
		return 0, fmt.Errorf("%w: conceal into %d samples, a lost frame is %d", ErrPCMSize, len(pcm), n)
	}
	// The length handed over is the length concealed: cap it.
	if err := d.dec.DecodePLC(pcm[:n:n]); err != nil {
		return 0, fmt.Errorf("%w: conceal: %w", ErrCodec, err)
	}
	d.concealed.Add(1)
	return n, nil
}

// DecodeFEC rebuilds the lost frame before nextPacket from the FEC data
// nextPacket carries (see EncoderConfig.FEC) and writes its
// LostFrameSamples samples to pcm. Without usable FEC data (the sender has
// FEC off, the packet is CELT-only, or so was the last decoded one) libopus
// conceals instead, and the call is counted in Stats.Concealed rather than
// Stats.FECRecovered. When the lost span is longer than one frame of
// nextPacket (a 60 ms packet lost before 20 ms ones), libopus conceals the
// start and rebuilds the end from FEC; that counts as FEC recovered.
// Afterwards nextPacket is decoded with Decode as usual.
func (d *Decoder) DecodeFEC(nextPacket []byte, pcm []int16) error {
	n := d.lostSamples
	if len(pcm) < n {
		return fmt.Errorf("%w: fec into %d samples, a lost frame is %d", ErrPCMSize, len(pcm), n)
	}
	p, err := parsePacket(nextPacket)
	if err != nil {
		d.corrupt.Add(1)
		return err
	}
	// libopus's own test (opus_decode_native): FEC is decoded only when the
	// lost span holds a whole frame of the next packet and neither that
	// packet nor the last decoded one is CELT-only; then SILK uses the LBRR
	// data if the packet has it and conceals otherwise.
	branch := n >= p.frameSamples48*d.cfg.SampleRate/48000 && p.mode != modeCELT && d.lastMode != modeCELT
	fec := branch && p.hasLBRR()
	if err := d.dec.DecodeFEC(nextPacket, pcm[:n:n]); err != nil {
		d.corrupt.Add(1)
		return fmt.Errorf("%w: fec from %d bytes: %w", ErrCorruptPacket, len(nextPacket), err)
	}
	if branch {
		d.lastMode = p.mode
	}
	if fec {
		d.fecRecovered.Add(1)
	} else {
		d.concealed.Add(1)
	}
	return nil
}
