package gemini

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
	DefaultBaseURL           = "https://generativelanguage.googleapis.com"
	DefaultAPIKeyEnv         = "GEMINI_API_KEY"
	DefaultMaxTokens         = 1024
	DefaultConnectTimeout    = 5 * time.Second
	DefaultFirstEventTimeout = 10 * time.Second
	DefaultIdleTimeout       = 10 * time.Second
	// DefaultMaxLineBytes bounds one line of the event stream, and the data
	// of one event. A streamed chunk is a few hundred bytes (a thought
	// signature a few kilobytes); a line over the bound is a protocol
	// error, never an unbounded buffer.
	DefaultMaxLineBytes = 256 << 10
)

// Config sets up an Adapter. Start from Gemini(model).
type Config struct {
	// BaseURL is the API root, without /v1beta/models/...
	BaseURL string
	// Model is the model name put in the request path (gemini-2.5-flash).
	Model string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New and sent as x-goog-api-key. Empty means no key (a
	// local gateway or a test server).
	APIKeyEnv string

	// MaxTokens is generationConfig.maxOutputTokens; 0: DefaultMaxTokens.
	MaxTokens int
	// Temperature is sent when set; the API takes [0, 2].
	Temperature *float64
	// ThinkingBudget, when not nil, is sent as
	// generationConfig.thinkingConfig.thinkingBudget (0 turns thinking off
	// on the models that allow it, -1 is dynamic).
	ThinkingBudget *int

	// ConnectTimeout bounds the wait for the response headers.
	ConnectTimeout time.Duration
	// FirstEventTimeout bounds the wait from the headers to the first
	// event.
	FirstEventTimeout time.Duration
	// IdleTimeout bounds the gap between two events.
	IdleTimeout time.Duration
	// MaxLineBytes bounds a line, and an event's data, of the stream.
	MaxLineBytes int

	// DialContext, for tests and special transports, opens the
	// connections instead of the default dialer; nil: the default dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Gemini is the preset for the Gemini API; the key is in GEMINI_API_KEY.
func Gemini(model string) Config {
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
	if strings.ContainsAny(c.Model, "/?#:% \t\r\n") {
		return fmt.Errorf("%w: Model %q holds a character a path segment cannot", ErrInvalidConfig, c.Model)
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
	if c.ThinkingBudget != nil && *c.ThinkingBudget < dynamicThinking {
		return fmt.Errorf("%w: ThinkingBudget %d must be -1 (dynamic), 0 (off) or positive", ErrInvalidConfig, *c.ThinkingBudget)
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
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}
