package deepgram

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const (
	// minEndpointing and maxEndpointing bound the service's end-of-speech
	// silence in a file.
	minEndpointing = 10 * time.Millisecond
	maxEndpointing = 10 * time.Second
	// minUtteranceEnd is the service's shortest utterance end.
	minUtteranceEnd = time.Second
	maxUtteranceEnd = 5 * time.Second
	// idleLimit is the service's: a socket without audio or a keep-alive
	// for that long is closed, so KeepAlive stays under it.
	idleLimit    = 10 * time.Second
	minKeepAlive = time.Second
	// minMessageBytes is the smallest inbound message bound.
	minMessageBytes = 1024
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "deepgram", Key: providers.KeyAlways, KeyEnv: DefaultAPIKeyEnv, Warm: providers.WarmConnect(),
		List: []providers.Option{
			of.URL("url", []string{"ws", "wss"}, func(c *Config, s string) { c.URL = s }).WithDefault(DefaultURL).WithDoc("no query"),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv),
			of.String("model", func(c *Config, s string) { c.Model = s }).WithDefault(DefaultModel),
			of.String("language", func(c *Config, s string) { c.Language = s }).WithExample("en").WithDoc("BCP-47; the service's default when left out"),
			of.Bool("no_interim_results", func(c *Config, b bool) { c.NoInterimResults = b }).WithExample(false).WithDoc("true: finals only"),
			of.Duration("endpointing", minEndpointing, maxEndpointing, func(c *Config, d time.Duration) { c.Endpointing = d }).WithExample(300 * time.Millisecond).WithDoc("the service's end-of-speech silence"),
			of.Bool("disable_endpointing", func(c *Config, b bool) { c.DisableEndpointing = b }).WithExample(true).WithDoc("instead of endpointing").AsAside(),
			of.Bool("punctuate", func(c *Config, b bool) { c.Punctuate = b }).WithExample(true),
			of.Bool("smart_format", func(c *Config, b bool) { c.SmartFormat = b }).WithExample(true),
			of.Bool("profanity_filter", func(c *Config, b bool) { c.ProfanityFilter = b }).WithExample(false).WithDoc("true: profanity masked with asterisks"),
			of.Bool("vad_events", func(c *Config, b bool) { c.VADEvents = b }).WithExample(false).WithDoc("SpeechStarted messages (signs of life)"),
			of.Duration("utterance_end", minUtteranceEnd, maxUtteranceEnd, func(c *Config, d time.Duration) { c.UtteranceEnd = d }).WithExample(time.Second).WithDoc("an utterance end after that long without words"),
			of.Duration("keep_alive", minKeepAlive, idleLimit-time.Millisecond, func(c *Config, d time.Duration) { c.KeepAlive = d }).WithDefault(DefaultKeepAlive),
			of.Int("max_message_bytes", minMessageBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxMessageBytes = n }).WithDefault(DefaultMaxMessageBytes),
			of.Int("queue_frames", 1, providers.MaxBuffer, func(c *Config, n int) { c.QueueFrames = n }).WithDefault(DefaultQueueFrames),
			of.Int("event_buffer", 1, providers.MaxBuffer, func(c *Config, n int) { c.EventBuffer = n }).WithDefault(DefaultEventBuffer),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("result_timeout", DefaultResultTimeout, func(c *Config, d time.Duration) { c.ResultTimeout = d }),
			of.Timeout("close_timeout", DefaultCloseTimeout, func(c *Config, d time.Duration) { c.CloseTimeout = d }),
		},
	}
}
