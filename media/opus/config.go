package opus

import (
	"fmt"
	"time"
)

// Defaults of EncoderConfig and DecoderConfig: wideband-capable 48 kHz mono,
// 20 ms frames (one RTP packet per frame, the usual ptime), the VoIP
// application, 32 kbit/s (transparent for speech, still small), and
// complexity 5: about half the CPU of 10 for a barely audible loss on
// speech, which matters when one process runs many calls.
const (
	DefaultSampleRate    = 48000
	DefaultFrameDuration = 20 * time.Millisecond
	DefaultBitrate       = 32000
	DefaultComplexity    = 5
)

// Limits of the settings, as libopus takes them.
const (
	MinBitrate    = 6000
	MaxBitrate    = 510000
	MaxComplexity = 10
	// ComplexityLowest asks for libopus complexity 0 (0 itself takes
	// DefaultComplexity, like every zero field).
	ComplexityLowest = -1
	// MaxPacketBytes is an Encode output buffer that fits any packet; it is
	// the size libopus recommends.
	MaxPacketBytes = 4000
)

// Application tells the encoder what it is tuned for.
type Application int

// The applications of libopus.
const (
	// ApplicationVoIP favours speech intelligibility (the default).
	ApplicationVoIP Application = iota
	// ApplicationAudio favours faithfulness to any input, music included.
	ApplicationAudio
	// ApplicationLowDelay drops the speech modes for 5 ms less latency.
	ApplicationLowDelay
)

// String names the application for logs and test failures.
func (a Application) String() string {
	switch a {
	case ApplicationVoIP:
		return "voip"
	case ApplicationAudio:
		return "audio"
	case ApplicationLowDelay:
		return "lowdelay"
	}
	return fmt.Sprintf("Application(%d)", int(a))
}

// EncoderConfig tunes an Encoder. Zero values take the defaults; FEC, DTX
// and PacketLossPercent are off/zero by default.
type EncoderConfig struct {
	// SampleRate of the PCM in Hz: 8000, 12000, 16000, 24000 or 48000.
	SampleRate int
	// FrameDuration of one Encode call: 10, 20, 40 or 60 ms.
	FrameDuration time.Duration
	// Application is what the encoder is tuned for.
	Application Application
	// Complexity trades CPU for quality, 1 to 10; ComplexityLowest for 0.
	Complexity int
	// Bitrate in bit/s, MinBitrate to MaxBitrate.
	Bitrate int
	// FEC makes each packet carry a low-bitrate copy of the previous frame
	// that the receiver recovers with DecodeFEC when that frame is lost. It
	// needs PacketLossPercent > 0 (libopus sends none otherwise) and works in
	// the speech modes only (not with ApplicationLowDelay).
	FEC bool
	// PacketLossPercent is the loss the encoder expects, 0 to 100; higher
	// values spend more bits on FEC and on loss-robust prediction.
	PacketLossPercent int
	// DTX makes the encoder send packets of 1 or 2 bytes during silence;
	// such a packet need not be transmitted.
	DTX bool
}

// withDefaults fills the zero fields.
func (c EncoderConfig) withDefaults() EncoderConfig {
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	if c.FrameDuration == 0 {
		c.FrameDuration = DefaultFrameDuration
	}
	if c.Bitrate == 0 {
		c.Bitrate = DefaultBitrate
	}
	switch c.Complexity {
	case 0:
		c.Complexity = DefaultComplexity
	case ComplexityLowest:
		c.Complexity = 0
	}
	return c
}

// Validate reports a configuration libopus would refuse or that cannot do
// what it says. Zero values are valid (they take the defaults).
func (c EncoderConfig) Validate() error {
	d := c.withDefaults()
	if err := validateRate(d.SampleRate); err != nil {
		return err
	}
	switch d.FrameDuration {
	case 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 60 * time.Millisecond:
	default:
		return fmt.Errorf("%w: encoder frame duration %v (want 10, 20, 40 or 60 ms)", ErrInvalidConfig, c.FrameDuration)
	}
	switch {
	case c.Application < ApplicationVoIP || c.Application > ApplicationLowDelay:
		return fmt.Errorf("%w: application %v", ErrInvalidConfig, c.Application)
	case d.Complexity < 0 || d.Complexity > MaxComplexity:
		return fmt.Errorf("%w: complexity %d (want 1 to %d, or ComplexityLowest)", ErrInvalidConfig, c.Complexity, MaxComplexity)
	case d.Bitrate < MinBitrate || d.Bitrate > MaxBitrate:
		return fmt.Errorf("%w: bitrate %d bit/s (want %d to %d)", ErrInvalidConfig, c.Bitrate, MinBitrate, MaxBitrate)
	case c.PacketLossPercent < 0 || c.PacketLossPercent > 100:
		return fmt.Errorf("%w: packet loss %d%% (want 0 to 100)", ErrInvalidConfig, c.PacketLossPercent)
	case c.FEC && c.PacketLossPercent == 0:
		return fmt.Errorf("%w: fec needs a packet loss percent above 0 (libopus sends no fec otherwise)", ErrInvalidConfig)
	case c.FEC && c.Application == ApplicationLowDelay:
		return fmt.Errorf("%w: fec needs the speech modes, which the low-delay application disables", ErrInvalidConfig)
	}
	return nil
}

// DecoderConfig tunes a Decoder. Zero values take the defaults.
type DecoderConfig struct {
	// SampleRate of the PCM produced, in Hz: 8000, 12000, 16000, 24000 or
	// 48000. Any packet decodes at any rate.
	SampleRate int
	// FrameDuration is how much audio Conceal and DecodeFEC produce before
	// the first packet has been decoded; afterwards they produce the
	// duration of the last decoded packet. 2.5 to 60 ms in 2.5 ms steps.
	FrameDuration time.Duration
}

// withDefaults fills the zero fields.
func (c DecoderConfig) withDefaults() DecoderConfig {
	if c.SampleRate == 0 {
		c.SampleRate = DefaultSampleRate
	}
	if c.FrameDuration == 0 {
		c.FrameDuration = DefaultFrameDuration
	}
	return c
}

// Validate reports a configuration libopus would refuse. Zero values are
// valid (they take the defaults).
func (c DecoderConfig) Validate() error {
	d := c.withDefaults()
	if err := validateRate(d.SampleRate); err != nil {
		return err
	}
	const step = 2500 * time.Microsecond
	if d.FrameDuration < step || d.FrameDuration > 60*time.Millisecond || d.FrameDuration%step != 0 {
		return fmt.Errorf("%w: decoder frame duration %v (want 2.5 to 60 ms in 2.5 ms steps)", ErrInvalidConfig, c.FrameDuration)
	}
	return nil
}

func validateRate(rate int) error {
	switch rate {
	case 8000, 12000, 16000, 24000, 48000:
		return nil
	}
	return fmt.Errorf("%w: sample rate %d Hz (want 8000, 12000, 16000, 24000 or 48000)", ErrInvalidConfig, rate)
}

// samplesIn is how many samples at rate make d.
func samplesIn(rate int, d time.Duration) int {
	return int(int64(rate) * int64(d) / int64(time.Second))
}
