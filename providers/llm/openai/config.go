package openai

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// Defaults of the zero Config fields.
const (
	DefaultConnectTimeout    = 5 * time.Second
	DefaultFirstEventTimeout = 10 * time.Second
	DefaultIdleTimeout       = 10 * time.Second
	// DefaultMaxLineBytes bounds one line of the event stream, and the data
	// of one event. A streamed chunk is a few hundred bytes; a line over the
	// bound is a protocol error, never an unbounded buffer.
	DefaultMaxLineBytes = 64 << 10
)

// Config sets up an Adapter. Start from a preset (OpenAI, OpenRouter,
// Ollama, VLLM) and set Model.
type Config struct {
	// BaseURL is the API root, without /chat/completions
	// (https://api.openai.com/v1).
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// APIKeyEnv is the NAME of the environment variable holding the key,
	// read once by New. Empty means no key (local servers).
	APIKeyEnv string

	// Temperature is sent when set.
	Temperature *float64
	// MaxTokens caps the answer when positive; sent as max_tokens, or as
	// max_completion_tokens when MaxCompletionTokens is set (the name
	// OpenAI's reasoning models require).
	MaxTokens           int
	MaxCompletionTokens bool
	// ReasoningEffort is sent as reasoning_effort when set: none, minimal,
	// low, medium, high or xhigh ("none" turns reasoning off on models
	// that allow it, which matters for latency).
	ReasoningEffort string

	// ConnectTimeout bounds the wait for the response headers (dial, TLS,
	// request and the server's first byte of headers).
	ConnectTimeout time.Duration
	// FirstEventTimeout bounds the wait from the headers to the first
	// event.
	FirstEventTimeout time.Duration
	// IdleTimeout bounds the gap between two events.
	IdleTimeout time.Duration
	// MaxLineBytes bounds a line, and an event's data, of the stream.
	MaxLineBytes int

	// DialContext, for tests and special transports, opens the
	// connections instead of the default dialer (a net.Dialer bounded by
	// ConnectTimeout); nil: the default dialer. It is given the address
	// of BaseURL's host, or of the proxy from the environment.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// OpenAI is the preset for api.openai.com; the key is in OPENAI_API_KEY.
func OpenAI(model string) Config {
	return Config{BaseURL: DefaultBaseURL, Model: model, APIKeyEnv: DefaultAPIKeyEnv}
}

// OpenRouter is the preset for openrouter.ai; the key is in
// OPENROUTER_API_KEY.
func OpenRouter(model string) Config {
	return Config{BaseURL: "https://openrouter.ai/api/v1", Model: model, APIKeyEnv: "OPENROUTER_API_KEY"}
}

// Ollama is the preset for a local Ollama server, without a key. The
// OLLAMA_BASE_URL environment variable, when set, replaces the base URL.
func Ollama(model string) Config {
	base := "http://localhost:11434/v1"
	if v := os.Getenv("OLLAMA_BASE_URL"); v != "" {
		base = v
	}
	return Config{BaseURL: base, Model: model}
}

// VLLM is the preset for a local vLLM server, without a key.
func VLLM(model string) Config {
	return Config{BaseURL: "http://localhost:8000/v1", Model: model}
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
	if c.ReasoningEffort != "" && !validEffort(c.ReasoningEffort) {
		return fmt.Errorf("%w: ReasoningEffort %q is not one of %s", ErrInvalidConfig, c.ReasoningEffort, effortList())
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
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}
