package gemini

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const (
	maxTemperature  = 2.0
	minMaxLineBytes = 256
	// dynamicThinking is the ThinkingBudget that lets the model choose.
	dynamicThinking = -1
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "gemini", Key: providers.KeyUnlessURL, KeyEnv: DefaultAPIKeyEnv, URLOption: "base_url", DefaultURL: DefaultBaseURL, Warm: providers.WarmHTTP(),
		List: []providers.Option{
			of.URL("base_url", []string{"http", "https"}, func(c *Config, s string) { c.BaseURL = s }).WithDefault(DefaultBaseURL),
			of.String("model", func(c *Config, s string) { c.Model = s }).AsRequired().WithExample("gemini-2.5-flash"),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv).WithDoc("only for the default base_url"),
			of.Int("max_tokens", 1, providers.MaxTokens, func(c *Config, n int) { c.MaxTokens = n }).WithDefault(DefaultMaxTokens),
			of.Float("temperature", 0, maxTemperature, func(c *Config, x float64) { c.Temperature = &x }).WithExample(0.6),
			of.Int("thinking_budget", dynamicThinking, providers.MaxTokens, func(c *Config, n int) { c.ThinkingBudget = &n }).WithExample(0).WithDoc("-1 dynamic, 0 off, or a budget"),
			of.Int("max_line_bytes", minMaxLineBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxLineBytes = n }).WithDefault(DefaultMaxLineBytes),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("first_event_timeout", DefaultFirstEventTimeout, func(c *Config, d time.Duration) { c.FirstEventTimeout = d }),
			of.Timeout("idle_timeout", DefaultIdleTimeout, func(c *Config, d time.Duration) { c.IdleTimeout = d }),
		},
	}
}
