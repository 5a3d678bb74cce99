package chaostest

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// Config sets up a run. Zero fields take the defaults.
type Config struct {
	// Calls is how many callers call at once (default 50).
	Calls int
	// Hold bounds the run (default 60 s, at least a Period and the
	// first calls' spread, 24 s): each caller places a call every Period,
	// its first within the first few seconds, as many as end within Hold.
	Hold time.Duration
	// Seed draws every call's fault, latencies and script (default 1).
	Seed uint64
	// NoFaults runs the same calls without their faults: the healthy
	// calls' twin run, to compare their latency.
	NoFaults bool
	// Log is the server's logger (default: none).
	Log *zerolog.Logger
}

// Period is how far apart a caller's calls start: a conversation's
// script (20.5-21.5 s) and its end.
const Period = 24 * time.Second

func (c Config) withDefaults() Config {
	if c.Calls == 0 {
		c.Calls = 50
	}
	if c.Hold == 0 {
		c.Hold = 60 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Log == nil {
		nop := zerolog.Nop()
		c.Log = &nop
	}
	return c
}

// Validate checks a config after defaults.
func (c Config) Validate() error {
	if c.Calls < 1 || c.Calls > 10000 {
		return fmt.Errorf("%w: %d calls", ErrInvalidConfig, c.Calls)
	}
	if c.Hold < Period+startSpread {
		return fmt.Errorf("%w: hold %v is shorter than a caller's period and the first calls' spread (%v)", ErrInvalidConfig, c.Hold, Period+startSpread)
	}
	return nil
}

// rounds is how many calls each caller places: as many Periods as fit
// in Hold after the first calls' spread, so the last call ends within it.
func (c Config) rounds() int {
	return max(1, int((c.Hold-startSpread)/Period))
}
