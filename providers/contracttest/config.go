package contracttest

import (
	"fmt"
	"time"
)

// Config sets the suite's bounds. Zero values take the defaults.
type Config struct {
	// TimeoutSlack is how far a Timeout may be from the io timeout, either
	// way (default 100ms).
	TimeoutSlack time.Duration
	// CancelPrompt is how long after a drop the events-sent counter is
	// watched (default 500ms).
	CancelPrompt time.Duration
	// CancelSlackEvents is how many response events may still be produced
	// within CancelPrompt after a drop (default 2).
	CancelSlackEvents int
	// WarmSlack is how much slower than a cold stream the stream after
	// Warm may be (default 50ms).
	WarmSlack time.Duration
	// LeakBound is how long goroutines may take to return to the baseline,
	// and how long the count must be stable to be taken as the baseline
	// (default 2s).
	LeakBound time.Duration
	// LongResponseWords is the length of the response that the cancel and
	// leak checks drop mid-way; at one word per event it must last longer
	// than LeakBound (default 200).
	LongResponseWords int
	// MaxEvents caps the events read from one stream (default 10000), so
	// a provider that never ends a response fails instead of looping.
	MaxEvents int
	// CancelSettle is the pause of the STT and TTS cancel checks between
	// the last read and the hang-up or cancel (default 50ms); what the
	// provider has buffered in the events channel by then was handed over
	// and is not counted against it.
	CancelSettle time.Duration
	// QuietWindow is how long nothing of a context may follow its Flushed
	// or its Cancelled ack (default 500ms).
	QuietWindow time.Duration
}

// The defaults of Config.
const (
	DefaultTimeoutSlack      = 100 * time.Millisecond
	DefaultCancelPrompt      = 500 * time.Millisecond
	DefaultCancelSlackEvents = 2
	DefaultWarmSlack         = 50 * time.Millisecond
	DefaultLeakBound         = 2 * time.Second
	DefaultLongResponseWords = 200
	DefaultMaxEvents         = 10000
	DefaultCancelSettle      = 50 * time.Millisecond
	DefaultQuietWindow       = 500 * time.Millisecond
)

// Validate rejects negative values.
func (c Config) Validate() error {
	if c.TimeoutSlack < 0 || c.CancelPrompt < 0 || c.CancelSlackEvents < 0 || c.WarmSlack < 0 ||
		c.LeakBound < 0 || c.LongResponseWords < 0 || c.MaxEvents < 0 || c.CancelSettle < 0 || c.QuietWindow < 0 {
		return fmt.Errorf("%w: %+v", ErrInvalidConfig, c)
	}
	return nil
}

// checkArgs rejects the arguments of a Run or a wrapper: a nil one
// (missing; what names it), an invalid config.
func checkArgs(missing bool, what string, cfg interface{ Validate() error }) error {
	if missing {
		return fmt.Errorf("%w: nil %s", ErrInvalidConfig, what)
	}
	return cfg.Validate()
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.TimeoutSlack == 0 {
		c.TimeoutSlack = DefaultTimeoutSlack
	}
	if c.CancelPrompt == 0 {
		c.CancelPrompt = DefaultCancelPrompt
	}
	if c.CancelSlackEvents == 0 {
		c.CancelSlackEvents = DefaultCancelSlackEvents
	}
	if c.WarmSlack == 0 {
		c.WarmSlack = DefaultWarmSlack
	}
	if c.LeakBound == 0 {
		c.LeakBound = DefaultLeakBound
	}
	if c.LongResponseWords == 0 {
		c.LongResponseWords = DefaultLongResponseWords
	}
	if c.MaxEvents == 0 {
		c.MaxEvents = DefaultMaxEvents
	}
	if c.CancelSettle == 0 {
		c.CancelSettle = DefaultCancelSettle
	}
	if c.QuietWindow == 0 {
		c.QuietWindow = DefaultQuietWindow
	}
	return c
}
