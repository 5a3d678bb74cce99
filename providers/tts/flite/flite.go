package flite

import (
	"context"

	"github.com/brisvox/brisvox/providers"
)

// Engine is the flite speech synthesizer: it opens sessions that speak on
// the CPU of this process. Safe for concurrent use.
type Engine struct {
	cfg   Config
	voice *voice
}

var _ providers.TTS = (*Engine)(nil)

// New checks cfg and loads its voice. In a build without cgo it fails with
// ErrNoCgo.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	v, err := loadVoice(cfg.Voice)
	if err != nil {
		return nil, err
	}
	return &Engine{cfg: cfg, voice: v}, nil
}

// Rate is the sample rate of the audio events.
func (e *Engine) Rate() int { return e.cfg.Rate }

// Config returns the engine's config with the defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// Warm synthesizes one word, so the voice's data and lexicon are paged in
// before the first answer.
func (e *Engine) Warm(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := e.voice.synthesize("hello", e.cfg.Rate)
	return err
}

// Connect opens a session; it starts two goroutines that Close (or the
// end of ctx) stops.
func (e *Engine) Connect(ctx context.Context) (providers.TTSSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return newSession(ctx, e.cfg, e.voice), nil
}

var _ providers.Named = (*Engine)(nil)

// Vendor is "flite" (providers.Named).
func (*Engine) Vendor() string { return "flite" }

// Model is "": the voice is built in (providers.Named).
func (*Engine) Model() string { return "" }
