package elevenlabs

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const (
	minChunkLength, maxChunkLength = 50, 500
	minVoiceSpeed, maxVoiceSpeed   = 0.7, 1.2
	minInactivity                  = time.Second
	maxInactivity                  = 180 * time.Second
	minMessageBytes                = 4096
)

// normalizations are the text_normalization values the service takes.
func normalizations() []string { return []string{"auto", "on", "off"} }

// voice is c's voice settings, made when absent.
func voice(c *Config) *VoiceSettings {
	if c.Voice == nil {
		c.Voice = &VoiceSettings{}
	}
	return c.Voice
}

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "elevenlabs", Key: providers.KeyAlways, KeyEnv: DefaultAPIKeyEnv, Warm: providers.WarmConnect(),
		List: []providers.Option{
			of.URL("url", []string{"ws", "wss"}, func(c *Config, s string) { c.URL = s }).WithDefault(DefaultURL).WithDoc("the service's root"),
			of.Env("api_key_env", func(c *Config, s string) { c.APIKeyEnv = s }).WithDefault(DefaultAPIKeyEnv),
			of.String("voice_id", func(c *Config, s string) { c.VoiceID = s }).WithDefault(DefaultVoiceID),
			of.String("model", func(c *Config, s string) { c.Model = s }).WithDefault(DefaultModel).WithDoc("eleven_v3 does not stream"),
			of.String("language", func(c *Config, s string) { c.Language = s }).WithExample("en").WithDoc("ISO 639-1, for the models that take it"),
			of.OneOfInt("sample_rate", sampleRates, func(c *Config, n int) { c.SampleRate = n }).WithDefault(DefaultSampleRate),
			of.Float("stability", 0, 1, func(c *Config, x float64) { voice(c).Stability = &x }).WithExample(0.5).WithDoc("voice settings (the voice's own when left out)"),
			of.Float("similarity_boost", 0, 1, func(c *Config, x float64) { voice(c).SimilarityBoost = &x }).WithExample(0.75),
			of.Float("style", 0, 1, func(c *Config, x float64) { voice(c).Style = &x }).WithExample(0.0),
			of.Bool("use_speaker_boost", func(c *Config, b bool) { voice(c).UseSpeakerBoost = &b }).WithExample(true),
			of.Float("speed", minVoiceSpeed, maxVoiceSpeed, func(c *Config, x float64) { voice(c).Speed = &x }).WithExample(1.0),
			of.Ints("chunk_length_schedule", minChunkLength, maxChunkLength, func(c *Config, n []int) { c.ChunkLengthSchedule = n }).WithExample([]int{120, 160, 250, 290}),
			of.Bool("auto_mode", func(c *Config, b bool) { c.AutoMode = b }).WithExample(false).WithDoc("true drops the chunk schedule (whole sentences)"),
			of.Enum("text_normalization", normalizations(), func(c *Config, s string) { c.TextNormalization = s }).WithExample("auto"),
			of.Bool("no_logging", func(c *Config, b bool) { c.NoLogging = b }).WithExample(false).WithDoc("zero retention (enterprise plans)"),
			of.Duration("inactivity_timeout", minInactivity, maxInactivity, func(c *Config, d time.Duration) { c.InactivityTimeout = d }).WithDefault(DefaultInactivityTimeout).WithDoc("whole seconds"),
			of.Int("max_contexts", 1, 64, func(c *Config, n int) { c.MaxContexts = n }).WithDefault(DefaultMaxContexts),
			of.Duration("keep_alive", time.Second, time.Minute, func(c *Config, d time.Duration) { c.KeepAlive = d }).WithDefault(DefaultKeepAlive),
			of.Bool("no_keep_alive", func(c *Config, b bool) { c.NoKeepAlive = b }).WithExample(true).AsAside(),
			of.Int("max_message_bytes", minMessageBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxMessageBytes = n }).WithDefault(DefaultMaxMessageBytes),
			of.Int("queue_frames", 1, providers.MaxBuffer, func(c *Config, n int) { c.QueueFrames = n }).WithDefault(DefaultQueueFrames),
			of.Int("event_buffer", 1, providers.MaxBuffer, func(c *Config, n int) { c.EventBuffer = n }).WithDefault(DefaultEventBuffer),
			of.Timeout("connect_timeout", DefaultConnectTimeout, func(c *Config, d time.Duration) { c.ConnectTimeout = d }),
			of.Timeout("reply_timeout", DefaultReplyTimeout, func(c *Config, d time.Duration) { c.ReplyTimeout = d }),
			of.Timeout("close_timeout", DefaultCloseTimeout, func(c *Config, d time.Duration) { c.CloseTimeout = d }),
		},
	}
}
