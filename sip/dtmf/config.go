package dtmf

import (
	"fmt"
	"time"
)

// Defaults and bounds of Config.
const (
	// DefaultClockRate is telephone-event's usual RTP clock (RFC 4733
	// telephone-event/8000).
	DefaultClockRate = 8000
	// MaxClockRate bounds Config.ClockRate (telephone-event/48000 rides
	// with Opus; nothing is faster).
	MaxClockRate = 192000
	// DefaultEndTimeout is how long after an event's last packet, with no
	// end packet seen, the press is reported anyway. RFC 4733 senders
	// refresh a held key every 50 ms or so, so 500 ms of nothing means the
	// end packets were lost, and a caller waiting on a digit waits at most
	// that much longer.
	DefaultEndTimeout = 500 * time.Millisecond
	// MaxEndTimeout bounds Config.EndTimeout.
	MaxEndTimeout = 10 * time.Second
)

// Config is a Detector's settings. The zero value means the defaults.
type Config struct {
	// ClockRate is the RTP clock rate of the telephone-event payload type
	// as the SDP's rtpmap says (0 means DefaultClockRate). It turns the
	// events' duration field into time.
	ClockRate int
	// EndTimeout is the silence after an event's last packet that ends it
	// when no end packet came (0 means DefaultEndTimeout).
	EndTimeout time.Duration
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.ClockRate == 0 {
		c.ClockRate = DefaultClockRate
	}
	if c.EndTimeout == 0 {
		c.EndTimeout = DefaultEndTimeout
	}
	return c
}

// Validate checks the settings (after the defaults).
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.ClockRate < 1000 || c.ClockRate > MaxClockRate {
		return fmt.Errorf("%w: clock rate %d Hz (want 1000 to %d)", ErrInvalidConfig, c.ClockRate, MaxClockRate)
	}
	if c.EndTimeout < 0 || c.EndTimeout > MaxEndTimeout {
		return fmt.Errorf("%w: end timeout %v (want 0 for the default, up to %v)", ErrInvalidConfig, c.EndTimeout, MaxEndTimeout)
	}
	return nil
}
