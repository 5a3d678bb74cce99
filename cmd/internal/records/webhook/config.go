package webhook

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/rs/zerolog"
)

// The defaults of Config and the backoff.
const (
	DefaultMaxAttempts = 12
	DefaultTimeout     = 10 * time.Second
	// The backoff after the nth failed attempt is BackoffMin doubled n-1
	// times, at most BackoffMax, then jittered to between half of it and
	// all of it. A Retry-After of the answer (seconds) lengthens it, up
	// to BackoffMax.
	BackoffMin = time.Second
	BackoffMax = 5 * time.Minute
	// MinSecretBytes is the shortest secret New takes.
	MinSecretBytes = 16
)

// Config is the end-of-call webhooks' settings.
type Config struct {
	// URLs receive every record (http or https).
	URLs []string
	// Secret signs every request; the caller reads it from the
	// environment (BRISVOX_WEBHOOK_SECRET). At least MinSecretBytes.
	Secret []byte
	// Dir is the durable queue's directory (a records/journal of its
	// own, on local disk).
	Dir string
	// MaxAttempts per delivery before it is given up (default 12: about
	// 25 minutes of backoff).
	MaxAttempts int
	// Timeout bounds each POST (default 10 s).
	Timeout time.Duration
	// Client sends the POSTs; nil: a client of the Sender's own that
	// does not follow redirects (a 3xx is a refusal).
	Client *http.Client
	Log    zerolog.Logger
}

func (c *Config) setDefaults() {
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
}

// Validate says what is wrong with the (defaulted) settings. It never
// repeats the secret, nor a URL's path or query (they may hold a token):
// a URL is named by its place in the list and its host.
func (c *Config) Validate() error {
	if len(c.URLs) == 0 {
		return fmt.Errorf("%w: no URLs (give at least one, or leave webhooks off)", ErrInvalidConfig)
	}
	seen := map[string]int{}
	for i, raw := range c.URLs {
		u, err := url.Parse(raw)
		if err != nil {
			return fmt.Errorf("%w: URL %d does not parse (write it as https://host/path)", ErrInvalidConfig, i+1)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("%w: URL %d (host %q): the scheme must be http or https", ErrInvalidConfig, i+1, u.Host)
		}
		if u.Host == "" {
			return fmt.Errorf("%w: URL %d has no host", ErrInvalidConfig, i+1)
		}
		if u.User != nil {
			return fmt.Errorf("%w: URL %d (host %q) holds a user or password; the receiver verifies the signature instead", ErrInvalidConfig, i+1, u.Host)
		}
		if j, ok := seen[raw]; ok {
			return fmt.Errorf("%w: URL %d repeats URL %d", ErrInvalidConfig, i+1, j+1)
		}
		seen[raw] = i
	}
	if len(c.Secret) < MinSecretBytes {
		return fmt.Errorf("%w: the secret is %d bytes; use at least %d (32 random bytes: head -c 32 /dev/urandom | base64), from BRISVOX_WEBHOOK_SECRET", ErrInvalidConfig, len(c.Secret), MinSecretBytes)
	}
	if c.Dir == "" {
		return fmt.Errorf("%w: Dir is empty (the webhooks' queue directory on local disk)", ErrInvalidConfig)
	}
	if c.MaxAttempts < 1 {
		return fmt.Errorf("%w: MaxAttempts is %d (at least 1; 0 for the default of %d)", ErrInvalidConfig, c.MaxAttempts, DefaultMaxAttempts)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: Timeout is %s (0 for the default of %s)", ErrInvalidConfig, c.Timeout, DefaultTimeout)
	}
	return nil
}

// Option changes a Sender's defaults (no I/O).
type Option func(*options)

type options struct {
	seed       uint64
	seeded     bool
	backoffMin time.Duration
	backoffMax time.Duration
}

// WithSeed seeds the backoff's jitter (default: from the clock at New).
func WithSeed(seed uint64) Option {
	return func(o *options) { o.seed, o.seeded = seed, true }
}

// WithBackoff replaces BackoffMin and BackoffMax (tests on real sockets).
func WithBackoff(minimum, maximum time.Duration) Option {
	return func(o *options) { o.backoffMin, o.backoffMax = minimum, maximum }
}
