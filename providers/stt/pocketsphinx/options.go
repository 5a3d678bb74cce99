package pocketsphinx

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const (
	minInterimInterval = 20 * time.Millisecond
	maxPreRoll         = 5 * time.Second
	minQueue           = 100 * time.Millisecond
	minMaxUtterance    = time.Second
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "pocketsphinx", Key: providers.NoKey, Warm: providers.WarmLoad(),
		List: []providers.Option{
			of.String("model_dir", func(c *Config, s string) { c.ModelDir = s }).WithDefault(DefaultModelDir),
			of.String("language_model", func(c *Config, s string) { c.LanguageModel = s }).WithDefault(DefaultLanguageModel),
			of.String("dict", func(c *Config, s string) { c.Dict = s }).WithDefault(DefaultDict),
			of.Enum("domain", []string{DomainFromNone, DomainFromLLM}, func(c *Config, s string) { c.DomainFrom = s }).WithDefault(DomainFromNone).WithDoc(`"llm": biased to the phrases of [llm] provider "rules"`),
			of.Float("domain_weight", 0.01, 0.99999, func(c *Config, f float64) { c.DomainWeight = f }).WithDefault(DefaultDomainWeight).WithDoc("the domain model's share against the general model"),
			of.Duration("interim_interval", minInterimInterval, 5*time.Second, func(c *Config, d time.Duration) { c.InterimInterval = d }).WithDefault(DefaultInterimInterval),
			of.Int("pool_size", 1, 64, func(c *Config, n int) { c.PoolSize = n }).WithDefault(DefaultPoolSize).WithDoc("decoders: callers speaking at once; 2 calls each count towards capacity"),
			of.Duration("acquire_timeout", 0, providers.MaxTimeout, func(c *Config, d time.Duration) { c.AcquireTimeout = d }).WithDefault(DefaultAcquireTimeout).WithDoc("a speech start's wait for a free decoder"),
			of.Duration("idle_decoder_timeout", 0, time.Hour, func(c *Config, d time.Duration) { c.IdleDecoderTimeout = d }).WithDefault(DefaultIdleDecoderTimeout).WithDoc("a decoder idle this long is freed, all but the last, ~90 MB each; 0 is the default"),
			of.Duration("queue", minQueue, time.Minute, func(c *Config, d time.Duration) { c.Queue = d }).WithDefault(DefaultQueue).WithDoc("of audio buffered"),
			of.Duration("max_utterance", minMaxUtterance, 10*time.Minute, func(c *Config, d time.Duration) { c.MaxUtterance = d }).WithDefault(DefaultMaxUtterance),
			of.Duration("pre_roll", 0, maxPreRoll, func(c *Config, d time.Duration) { c.PreRoll = d }).WithDefault(DefaultPreRoll).WithDoc("audio before the VAD's speech start that is decoded too"),
			of.Int("event_buffer", 1, providers.MaxBuffer, func(c *Config, n int) { c.EventBuffer = n }).WithDefault(DefaultEventBuffer),
		},
	}
}
