package aura

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const minMessageBytes = 1024

// policies are the flush policies an agent file names by their String.
func policies() []FlushPolicy { return []FlushPolicy{PerTurn, PerText} }

// policyNames are the flush_policy values.
func policyNames() []string {
	var out []string
	for _, p := range policies() {
		out = append(out, p.String())
	}
	return out
}

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "deepgram", Key: providers.KeyAlways, KeyEnv: DefaultAPIKeyEnv, Warm: providers.WarmConnect(),
		List: []providers.Option{
			of.URL("url", []string{"ws", "wss"}, func(c *Config, s string) { c.URL = s }).WithDefault(DefaultURL),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv),
			of.String("model", func(c *Config, s string) { c.Model = s }).WithDefault(DefaultModel),
			of.OneOfInt("sample_rate", sampleRates, func(c *Config, n int) { c.SampleRate = n }).WithDefault(DefaultSampleRate),
			of.Enum("flush_policy", policyNames(), func(c *Config, s string) {
				for _, p := range policies() {
					if p.String() == s {
						c.FlushPolicy = p
					}
				}
			}).WithDefault(PerTurn.String()),
			of.Duration("probe_interval", 100*time.Millisecond, time.Minute, func(c *Config, d time.Duration) { c.ProbeInterval = d }).WithDefault(DefaultProbeInterval),
			of.Int("max_message_bytes", minMessageBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxMessageBytes = n }).WithDefault(DefaultMaxMessageBytes),
			of.Int("queue_frames", 1, providers.MaxBuffer, func(c *Config, n int) { c.QueueFrames = n }).WithDefault(DefaultQueueFrames),
			of.Int("event_buffer", 1, providers.MaxBuffer, func(c *Config, n int) { c.EventBuffer = n }).WithDefault(DefaultEventBuffer),
			of.Int("pending_events", 1, providers.MaxBuffer, func(c *Config, n int) { c.PendingEvents = n }).WithDefault(DefaultPendingEvents),
			of.Int("max_held_bytes", 1, providers.MaxBytes, func(c *Config, n int) { c.MaxHeldBytes = n }).WithDefault(DefaultMaxHeldBytes),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("reply_timeout", DefaultReplyTimeout, func(c *Config, d time.Duration) { c.ReplyTimeout = d }),
			of.Timeout("close_timeout", DefaultCloseTimeout, func(c *Config, d time.Duration) { c.CloseTimeout = d }),
		},
	}
}
