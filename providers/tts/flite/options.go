package flite

import (
	"time"

	"github.com/brisvox/brisvox/providers"
)

// The bounds Validate and the option table share.
const (
	minRate            = 8000
	maxRate            = 48000
	minChunk           = 10 * time.Millisecond
	maxChunk           = 200 * time.Millisecond
	minMaxPieceRunes   = 20
	minMaxContextBytes = 256
)

// Options is the table of the options an agent file may set, in the
// order the docs show them.
func Options() providers.Options {
	var of providers.Of[Config]
	return providers.Options{
		Vendor: "flite", Key: providers.NoKey, Warm: providers.WarmLoad(),
		List: []providers.Option{
			of.Enum("voice", Voices(), func(c *Config, s string) { c.Voice = s }).WithDefault(DefaultVoice),
			of.Int("rate", minRate, maxRate, func(c *Config, n int) { c.Rate = n }).WithExample(16000).WithDoc("the voice's own when left out (16000, kal 8000)"),
			of.Duration("chunk", minChunk, maxChunk, func(c *Config, d time.Duration) { c.Chunk = d }).WithDefault(DefaultChunk).WithDoc("of audio per event"),
			of.Int("max_piece_runes", minMaxPieceRunes, 1<<16, func(c *Config, n int) { c.MaxPieceRunes = n }).WithDefault(DefaultMaxPieceRunes),
			of.Int("max_context_bytes", minMaxContextBytes, providers.MaxBytes, func(c *Config, n int) { c.MaxContextBytes = n }).WithDefault(DefaultMaxContextBytes),
			of.Int("max_open_contexts", 1, 1024, func(c *Config, n int) { c.MaxOpenContexts = n }).WithDefault(DefaultMaxOpenContexts),
		},
	}
}
