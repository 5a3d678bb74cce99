package rules

import (
	"fmt"
	"time"
)

// MaxDelay bounds both delays.
const MaxDelay = 5 * time.Second

// Config paces the responses. The intents are fixed and have no options.
// The zero Config answers at once: every event of a response is ready
// when Stream returns, as nothing is computed after it. A simulation that
// wants a model's pace (fillers and barge-in exercised as in production)
// sets the delays explicitly, for instance 250 ms and 40 ms, about a
// hosted model's first token and streaming gap.
type Config struct {
	// FirstToken is the time from Stream to the first event; 0 (the
	// default) means none. At most MaxDelay.
	FirstToken time.Duration
	// TokenGap is the time between two text or tool-call events; 0 (the
	// default) means none. At most MaxDelay.
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
