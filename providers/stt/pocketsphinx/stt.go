package pocketsphinx

import (
	"context"
	"fmt"

	"github.com/brisvox/brisvox/providers"
)

// STT is the offline recognizer: it opens sessions on decoders from a
// bounded pool. Close it to free the decoders' memory.
type STT struct {
	cfg  Config
	pool *pool
}

var _ providers.STT = (*STT)(nil)

// New checks cfg and prepares the pool; it loads nothing (Warm does). It
// refuses a build without cgo (ErrNoCgo) and any rate but 16 kHz
// (ErrSampleRate: pocketsphinx fails on 8 kHz telephone audio).
func New(cfg Config) (*STT, error) {
	if !cgoEnabled {
		return nil, ErrNoCgo
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &STT{cfg: cfg, pool: newPool(cfg.PoolSize, func() (recognizer, error) { return loadDecoder(cfg) })}, nil
}

// Connect checks out a decoder (loading one when none is idle, waiting at
// most AcquireTimeout when all PoolSize are busy) and starts a session.
// Cancelling ctx ends the session like Close.
func (t *STT) Connect(ctx context.Context) (providers.STTSession, error) {
	dec, err := t.pool.acquire(ctx, t.cfg.AcquireTimeout)
	if err != nil {
		return nil, err
	}
	return startSession(ctx, t.cfg, dec, t.pool.release), nil
}

// Warm makes sure one decoder is loaded and idle, so the next Connect does
// not pay the model load. Loading cannot be interrupted once started.
func (t *STT) Warm(ctx context.Context) error {
	dec, err := t.pool.acquire(ctx, t.cfg.AcquireTimeout)
	if err != nil {
		return fmt.Errorf("pocketsphinx: warm: %w", err)
	}
	t.pool.release(dec, true)
	return nil
}

// Close frees the idle decoders and refuses new sessions; sessions still
// open free theirs when they end. Idempotent.
func (t *STT) Close() error {
	t.pool.close()
	return nil
}

// Decoders reports the decoders alive (idle or in use) and idle.
func (t *STT) Decoders() (loaded, idle int) { return t.pool.stats() }
