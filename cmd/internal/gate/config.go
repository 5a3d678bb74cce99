package gate

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultMaxTTL     = time.Hour
	DefaultRatePerSec = 5
	DefaultBurst      = 20
	DefaultMaxSources = 4096
	DefaultLogEvery   = time.Second
)

// MinSecretLen is the least length of a token or a signing secret, in
// bytes: 32 random bytes are out of reach of guessing, even unlimited.
const MinSecretLen = 32

// MaxTokenLen is the longest bearer token, in bytes.
const MaxTokenLen = 512

// Config sets a Gate up. Zero values take the defaults.
type Config struct {
	// Token is the bearer token, read from the environment by the
	// caller; empty: no bearer authentication.
	Token string
	// Secret signs URLs (Sign); empty: no signed URLs.
	Secret []byte
	// MaxTTL is how far ahead of now a signed URL's exp may lie.
	// Default 1 h.
	MaxTTL time.Duration
	// RatePerSec is how many requests a second a source may make in
	// the long run, and Burst how many at once. Defaults 5 and 20.
	RatePerSec float64
	Burst      int
	// MaxSources bounds the sources whose buckets are kept. Default
	// 4096.
	MaxSources int
	// Log gets the refusals' summary lines; the zero Logger writes
	// nothing.
	Log zerolog.Logger
	// LogEvery is the interval of those summaries. Default 1 s.
	LogEvery time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxTTL == 0 {
		c.MaxTTL = DefaultMaxTTL
	}
	if c.RatePerSec == 0 {
		c.RatePerSec = DefaultRatePerSec
	}
	if c.Burst == 0 {
		c.Burst = DefaultBurst
	}
	if c.MaxSources == 0 {
		c.MaxSources = DefaultMaxSources
	}
	if c.LogEvery == 0 {
		c.LogEvery = DefaultLogEvery
	}
	return c
}

// Validate checks a config after defaults. It never prints a token or a
// secret, only their lengths.
func (c Config) Validate() error {
	switch {
	case c.Token != "" && len(c.Token) < MinSecretLen:
		return fmt.Errorf("%w: the bearer token has %d bytes, want at least %d", ErrInvalidConfig, len(c.Token), MinSecretLen)
	case len(c.Token) > MaxTokenLen:
		return fmt.Errorf("%w: the bearer token has %d bytes, want at most %d", ErrInvalidConfig, len(c.Token), MaxTokenLen)
	case len(c.Secret) != 0 && len(c.Secret) < MinSecretLen:
		return fmt.Errorf("%w: the URL signing secret has %d bytes, want at least %d", ErrInvalidConfig, len(c.Secret), MinSecretLen)
	case c.MaxTTL < 0:
		return fmt.Errorf("%w: negative max TTL %v", ErrInvalidConfig, c.MaxTTL)
	case !(c.RatePerSec > 0) || c.RatePerSec > 1e9:
		return fmt.Errorf("%w: rate %v per second, want > 0 and <= 1e9", ErrInvalidConfig, c.RatePerSec)
	case c.Burst < 1:
		return fmt.Errorf("%w: burst %d, want >= 1", ErrInvalidConfig, c.Burst)
	case c.MaxSources < 1 || c.MaxSources > 1<<24:
		return fmt.Errorf("%w: max sources %d, want 1 to %d", ErrInvalidConfig, c.MaxSources, 1<<24)
	case c.LogEvery < 0:
		return fmt.Errorf("%w: negative log interval %v", ErrInvalidConfig, c.LogEvery)
	}
	return nil
}
