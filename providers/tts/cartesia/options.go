package cartesia

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const (
	minSpeed, maxSpeed   = 0.6, 1.5
	minVolume, maxVolume = 0.5, 2.0
	maxBufferDelay       = 5 * time.Second
	minMessageBytes      = 4096
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "cartesia", Key: providers.KeyAlways, KeyEnv: DefaultAPIKeyEnv, Warm: providers.WarmConnect(),
		List: []providers.Option{
			of.URL("url", []string{"ws", "wss"}, func(c *Config, s string) { c.URL = s }).WithDefault(DefaultURL),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv),
			of.String("version", func(c *Config, s string) { c.Version = s }).WithDefault(DefaultVersion).WithDoc("Cartesia-Version"),
			of.String("model", func(c *Config, s string) { c.Model = s }).WithDefault(DefaultModel),
			of.String("voice", func(c *Config, s string) { c.Voice = s }).WithDefault(DefaultVoice).WithDoc("a voice id"),
			of.String("language", func(c *Config, s string) { c.Language = s }).WithDefault(DefaultLanguage),
			of.OneOfInt("sample_rate", SampleRates, func(c *Config, n int) { c.SampleRate = n }).WithDefault(DefaultSampleRate),
			of.Float("speed", minSpeed, maxSpeed, func(c *Config, x float64) { c.Speed = x }).WithExample(1.0).WithDoc("generation_config (sonic-3); the service's default when left out"),
			of.Float("volume", minVolume, maxVolume, func(c *Config, x float64) { c.Volume = x }).WithExample(1.0),
			of.String("emotion", func(c *Config, s string) { c.Emotion = s }).WithExample("content"),
			of.Duration("max_buffer_delay", time.Millisecond, maxBufferDelay, func(c *Config, d time.Duration) { c.MaxBufferDelay = d }).WithExample(300 * time.Millisecond).WithDoc("the service's default is 3s"),
			of.Bool("no_buffer_delay", func(c *Config, b bool) { c.NoBufferDelay = b }).WithExample(true).WithDoc("instead: speak each text as it comes").AsAside(),
			of.Int("max_message_bytes", minMessageBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxMessageBytes = n }).WithDefault(DefaultMaxMessageBytes),
			of.Int("queue_frames", 1, providers.MaxBuffer, func(c *Config, n int) { c.QueueFrames = n }).WithDefault(DefaultQueueFrames),
			of.Int("event_buffer", 1, providers.MaxBuffer, func(c *Config, n int) { c.EventBuffer = n }).WithDefault(DefaultEventBuffer),
			of.Int("pending_events", 1, providers.MaxBuffer, func(c *Config, n int) { c.PendingEvents = n }).WithDefault(DefaultPendingEvents),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("reply_timeout", DefaultReplyTimeout, func(c *Config, d time.Duration) { c.ReplyTimeout = d }),
			of.Timeout("close_timeout", DefaultCloseTimeout, func(c *Config, d time.Duration) { c.CloseTimeout = d }),
		},
	}
}
