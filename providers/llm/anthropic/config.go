package anthropic

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Defaults of the zero Config fields.
const (
	DefaultBaseURL           = "https://api.anthropic.com"
	DefaultAPIKeyEnv         = "ANTHROPIC_API_KEY"
	DefaultVersion           = "2023-06-01"
	DefaultMaxTokens         = 1024
	DefaultConnectTimeout    = 5 * time.Second
	DefaultFirstEventTimeout = 10 * time.Second
	DefaultIdleTimeout       = 10 * time.Second
	// DefaultMaxLineBytes bounds one line of the event stream, and the data
	// of one event. A streamed event is a few hundred bytes (a signature
	// delta a few kilobytes); a line over the bound is a protocol error,
	// never an unbounded buffer.
	DefaultMaxLineBytes = 64 << 10
	// MinThinkingBudget is the smallest budget the API accepts.
	MinThinkingBudget = 1024
)

// Config sets up an Adapter. Start from Anthropic(model).
type Config struct {
	// BaseURL is the API root, without /v1/messages
	// (https://api.anthropic.com).
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New and sent as x-api-key. Empty means no key (a local
	// gateway or a test server).
	APIKeyEnv string
	// Version is sent as anthropic-version; empty: DefaultVersion.
	Version string

	// MaxTokens caps the answer (the API requires it); 0: DefaultMaxTokens.
	MaxTokens int
	// Temperature is sent when set; the API takes [0, 1] and none with
	// thinking.
	Temperature *float64
	// ThinkingBudget, when positive, turns extended thinking on with this
	// budget_tokens (at least MinThinkingBudget, below MaxTokens).
	ThinkingBudget int

	// ConnectTimeout bounds the wait for the response headers (dial, TLS,
	// request and the server's first byte of headers).
	ConnectTimeout time.Duration
	// FirstEventTimeout bounds the wait from the headers to the first
	// event.
	FirstEventTimeout time.Duration
	// IdleTimeout bounds the gap between two events (the service sends
	// ping events while it thinks).
	IdleTimeout time.Duration
	// MaxLineBytes bounds a line, and an event's data, of the stream.
	MaxLineBytes int

	// DialContext, for tests and special transports, opens the
	// connections instead of the default dialer (a net.Dialer bounded by
	// ConnectTimeout); nil: the default dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Anthropic is the preset for the Anthropic API; the key is in
// ANTHROPIC_API_KEY.
func Anthropic(model string) Config {
	return Config{BaseURL: DefaultBaseURL, Model: model, APIKeyEnv: DefaultAPIKeyEnv}
}

// Validate checks the config; zero durations and sizes mean the defaults.
// The error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: BaseURL %q is not an http(s) URL", ErrInvalidConfig, c.BaseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: BaseURL must carry no credentials, query or fragment", ErrInvalidConfig)
	}
	if strings.TrimSpace(c.Model) == "" {
		return fmt.Errorf("%w: Model is empty", ErrInvalidConfig)
	}
	if c.ConnectTimeout < 0 || c.FirstEventTimeout < 0 || c.IdleTimeout < 0 {
		return fmt.Errorf("%w: timeouts must not be negative", ErrInvalidConfig)
	}
	if c.MaxLineBytes < 0 || (c.MaxLineBytes > 0 && c.MaxLineBytes < minMaxLineBytes) {
		return fmt.Errorf("%w: MaxLineBytes %d must be 0 (default) or at least %d", ErrInvalidConfig, c.MaxLineBytes, minMaxLineBytes)
	}
	if c.MaxTokens < 0 {
		return fmt.Errorf("%w: MaxTokens %d is negative", ErrInvalidConfig, c.MaxTokens)
	}
	if c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > maxTemperature) {
		return fmt.Errorf("%w: Temperature %v is outside [0, %v]", ErrInvalidConfig, *c.Temperature, maxTemperature)
	}
	if c.ThinkingBudget < 0 || (c.ThinkingBudget > 0 && c.ThinkingBudget < MinThinkingBudget) {
		return fmt.Errorf("%w: ThinkingBudget %d must be 0 (off) or at least %d", ErrInvalidConfig, c.ThinkingBudget, MinThinkingBudget)
	}
	if c.ThinkingBudget > 0 {
		maxTokens := c.MaxTokens
		if maxTokens == 0 {
			maxTokens = DefaultMaxTokens
		}
		if c.ThinkingBudget >= maxTokens {
			return fmt.Errorf("%w: ThinkingBudget %d must be below MaxTokens %d", ErrInvalidConfig, c.ThinkingBudget, maxTokens)
		}
		if c.Temperature != nil {
			return fmt.Errorf("%w: Temperature cannot be set with thinking", ErrInvalidConfig)
		}
	}
	if strings.ContainsAny(c.Version, "\r\n") {
		return fmt.Errorf("%w: Version holds a line break", ErrInvalidConfig)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.FirstEventTimeout == 0 {
		c.FirstEventTimeout = DefaultFirstEventTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxLineBytes == 0 {
		c.MaxLineBytes = DefaultMaxLineBytes
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}
