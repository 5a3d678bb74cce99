package openaispeech

import (
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
	minSpeed, maxSpeed     = 0.25, 4.0
	minPCMRate, maxPCMRate = 8000, 48000
	minReadBytes           = 64
	maxReadBytes           = 1 << 20
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "openaispeech", Key: providers.KeyUnlessURL, KeyEnv: DefaultAPIKeyEnv, URLOption: "base_url", DefaultURL: DefaultBaseURL, Warm: providers.WarmModels(),
		List: []providers.Option{
			of.URL("base_url", []string{"http", "https"}, func(c *Config, s string) { c.BaseURL = s }).WithDefault(DefaultBaseURL).WithDoc("a local server: http://localhost:8880/v1"),
			of.String("model", func(c *Config, s string) { c.Model = s }).AsRequired().WithExample("gpt-4o-mini-tts"),
			of.String("voice", func(c *Config, s string) { c.Voice = s }).AsRequired().WithExample("coral"),
			of.Enum("format", []string{FormatPCM, FormatWAV}, func(c *Config, s string) { c.Format = s }).WithDefault(FormatPCM).WithDoc("wav: the rate from the header"),
			of.Float("speed", minSpeed, maxSpeed, func(c *Config, x float64) { c.Speed = x }).WithExample(1.0),
			of.String("instructions", func(c *Config, s string) { c.Instructions = s }).WithExample("Warm and brisk.").WithDoc("the voice's tone (not tts-1)"),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv).WithDoc("only for the default base_url"),
			of.Int("pcm_rate", minPCMRate, maxPCMRate, func(c *Config, n int) { c.PCMRate = n }).WithDefault(DefaultPCMRate).WithDoc("the rate of raw pcm"),
			of.Int("max_input_runes", 1, 1<<20, func(c *Config, n int) { c.MaxInputRunes = n }).WithDefault(DefaultMaxInputRunes),
			of.Int("max_queued_bytes", 1, providers.MaxBytes, func(c *Config, n int) { c.MaxQueuedBytes = n }).WithDefault(DefaultMaxQueuedBytes),
			of.Int("max_open_contexts", 1, 1024, func(c *Config, n int) { c.MaxOpenContexts = n }).WithDefault(DefaultMaxOpenContexts),
			of.Int("read_bytes", minReadBytes, maxReadBytes, func(c *Config, n int) { c.ReadBytes = n }).WithDefault(DefaultReadBytes),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("first_byte_timeout", DefaultFirstByteTimeout, func(c *Config, d time.Duration) { c.FirstByteTimeout = d }),
			of.Timeout("idle_timeout", DefaultIdleTimeout, func(c *Config, d time.Duration) { c.IdleTimeout = d }),
		},
	}
}
