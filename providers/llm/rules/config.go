package rules

import (
	"fmt"
	"time"
)

// Defaults of the zero Config fields: about what a hosted model's first
// token and streaming pace sound like, so fillers and barge-in are
// exercised as in production.
const (
	DefaultFirstToken = 250 * time.Millisecond
	DefaultTokenGap   = 40 * time.Millisecond
	// MaxDelay bounds both delays.
	MaxDelay = 5 * time.Second
)

// Config paces the responses. The intents are fixed and have no options.
type Config struct {
	// FirstToken is the time from Stream to the first event; 0 means
	// DefaultFirstToken. At most MaxDelay.
	FirstToken time.Duration
	// TokenGap is the time between two text or tool-call events; 0 means
	// DefaultTokenGap. At most MaxDelay.
	TokenGap time.Duration
}

// Validate checks that both delays are in [0, MaxDelay]. The error wraps
// ErrInvalidConfig.
func (c Config) Validate() error {
	if c.FirstToken < 0 || c.FirstToken > MaxDelay {
		return fmt.Errorf("%w: FirstToken %v is outside [0, %v]", ErrInvalidConfig, c.FirstToken, MaxDelay)
	}
	if c.TokenGap < 0 || c.TokenGap > MaxDelay {
		return fmt.Errorf("%w: TokenGap %v is outside [0, %v]", ErrInvalidConfig, c.TokenGap, MaxDelay)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.FirstToken == 0 {
		c.FirstToken = DefaultFirstToken
	}
	if c.TokenGap == 0 {
		c.TokenGap = DefaultTokenGap
	}
	return c
}
