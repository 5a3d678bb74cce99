package openai

import (
	"slices"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The endpoint and key variable of the OpenAI preset, the agent file's
// defaults.
const (
	DefaultBaseURL   = "https://api.openai.com/v1"
	DefaultAPIKeyEnv = "OPENAI_API_KEY"
)

// The bounds Validate and the option table share.
const (
	maxTemperature  = 2.0
	minMaxLineBytes = 256
)

// efforts are the reasoning efforts the API knows.
func efforts() []string { return []string{"none", "minimal", "low", "medium", "high", "xhigh"} }

// validEffort tells whether the API knows the reasoning effort e.
func validEffort(e string) bool { return slices.Contains(efforts(), e) }

// effortList is the efforts for a message.
func effortList() string { return strings.Join(efforts(), ", ") }

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "openai", Key: providers.KeyUnlessURL, KeyEnv: DefaultAPIKeyEnv, URLOption: "base_url", DefaultURL: DefaultBaseURL, Warm: providers.WarmHTTP(),
		List: []providers.Option{
			of.URL("base_url", []string{"http", "https"}, func(c *Config, s string) { c.BaseURL = s }).WithDefault(DefaultBaseURL).WithDoc("Ollama: http://localhost:11434/v1"),
			of.String("model", func(c *Config, s string) { c.Model = s }).AsRequired().WithExample("gpt-4.1-mini"),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv).WithDoc("only for the default base_url"),
			of.Float("temperature", 0, maxTemperature, func(c *Config, x float64) { c.Temperature = &x }).WithExample(0.4),
			of.Int("max_tokens", 1, providers.MaxTokens, func(c *Config, n int) { c.MaxTokens = n }).WithExample(300),
			of.Bool("max_completion_tokens", func(c *Config, b bool) { c.MaxCompletionTokens = b }).WithExample(false).WithDoc("send max_tokens as max_completion_tokens (reasoning models)"),
			of.Enum("reasoning_effort", efforts(), func(c *Config, s string) { c.ReasoningEffort = s }).WithExample("low"),
			of.Int("max_line_bytes", minMaxLineBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxLineBytes = n }).WithDefault(DefaultMaxLineBytes),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("first_event_timeout", DefaultFirstEventTimeout, func(c *Config, d time.Duration) { c.FirstEventTimeout = d }),
			of.Timeout("idle_timeout", DefaultIdleTimeout, func(c *Config, d time.Duration) { c.IdleTimeout = d }),
		},
	}
}
